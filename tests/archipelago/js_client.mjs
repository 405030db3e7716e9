// archipelago.js 2.1.0 against gamecodec.archipelago.testing.Room (tests/archipelago/test_js_interop.py).
// Usage: node js_client.mjs <ws url> <node_modules dir>
// Logs in as "JSPlayer" (game "Clique"), checks locations, receives items, chats, uses data storage
// (Get/Set/SetNotify) and DeathLink, and prints one JSON line of what it saw.
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [url, modules] = process.argv.slice(2);
const require = createRequire(join(modules, "noop.js"));
globalThis.WebSocket = require("ws").WebSocket;  // node 20 has no global WebSocket
const { Client } = await import(pathToFileURL(join(modules, "archipelago.js", "dist", "index.js")).href);

const result = { login: null, items: [], chat: [], notified: [], deaths: [] };
const timer = setTimeout(() => { result.timeout = true; finish(1); }, 30000);

function finish(code) {
    clearTimeout(timer);
    process.stdout.write(JSON.stringify(result) + "\n");
    process.exit(code);
}

function until(predicate) {
    return new Promise((resolve) => {
        const poll = setInterval(() => { if (predicate()) { clearInterval(poll); resolve(); } }, 20);
    });
}

try {
    const client = new Client();
    client.items.on("itemsReceived", (items, index) => {
        for (const item of items) result.items.push({ id: item.id, location: item.locationId, index });
    });
    client.messages.on("chat", (message, player) => result.chat.push({ message, from: player.name }));
    client.deathLink.on("deathReceived", (source, time, cause) => result.deaths.push({ source, cause }));

    const slotData = await client.login(url, "JSPlayer", "Clique", {
        version: { major: 0, minor: 6, build: 8 },
        tags: ["AP", "DeathLink"],
    });
    result.login = { slotData, slot: client.players.self.slot, players: client.players.teams[0].length };

    const initial = await client.storage.notify(["shared"], (key, value, old) => {
        result.notified.push({ key, value, old: old ?? null });
    });
    result.shared_initial = initial.shared ?? null;

    client.check(1001, 1002);
    result.scouted = (await client.scout([1003])).map((item) => ({ id: item.id, receiver: item.receiver.name }));
    result.committed = await client.storage.prepare("js_counter", 0).add(7).multiply(6).commit(true);
    result.fetched = await client.storage.fetch(["js_counter", "_read_race_mode"]);
    await client.messages.say("js:ready");

    await until(() => result.items.length >= 2 && result.notified.length >= 1 && result.deaths.length >= 1);
    client.deathLink.sendDeathLink("JSPlayer", "JSPlayer tripped.");
    await client.messages.say("js:done");
    await new Promise((resolve) => setTimeout(resolve, 200));
    client.socket.disconnect();
    finish(0);
} catch (error) {
    result.error = String(error && error.stack || error);
    finish(1);
}
