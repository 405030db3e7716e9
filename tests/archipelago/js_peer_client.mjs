// archipelago.js 2.1.0 as the peer of our asyncio client (tests/archipelago/test_js_peer.py).
// Usage: node js_peer_client.mjs <ws url> <node_modules dir>
// Logs in as "JSPlayer" (game "Clique", DeathLink on), keeps the text archipelago.js renders for
// every ItemSend (names resolved), and sends a death each time PyBuddy asks; prints one JSON line.
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [url, modules] = process.argv.slice(2);
const require = createRequire(join(modules, "noop.js"));
globalThis.WebSocket = require("ws").WebSocket;  // node 20 has no global WebSocket
const { Client } = await import(pathToFileURL(join(modules, "archipelago.js", "dist", "index.js")).href);

const result = { itemSent: [], chat: [] };
const timer = setTimeout(() => { result.timeout = true; finish(1); }, 40000);

function finish(code) {
    clearTimeout(timer);
    process.stdout.write(JSON.stringify(result) + "\n");
    process.exit(code);
}

function heard(text) {
    return new Promise((resolve) => {
        const poll = setInterval(() => {
            if (result.chat.includes(text)) { clearInterval(poll); resolve(); }
        }, 20);
    });
}

try {
    const client = new Client();
    client.messages.on("itemSent", (text) => result.itemSent.push(text));
    client.messages.on("chat", (message) => result.chat.push(message));
    await client.login(url, "JSPlayer", "Clique", {
        version: { major: 0, minor: 6, build: 8 },
        tags: ["AP", "DeathLink"],
    });
    await client.messages.say("js:ready");
    await heard("py:dl-on");
    client.deathLink.sendDeathLink("JSPlayer", "first");
    await heard("py:dl-off");
    client.deathLink.sendDeathLink("JSPlayer", "second");
    await client.messages.say("js:sent-both");
    await heard("py:done");
    client.socket.disconnect();
    finish(0);
} catch (error) {
    result.error = String(error && error.stack || error);
    finish(1);
}
