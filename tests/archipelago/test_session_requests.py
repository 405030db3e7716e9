"""PendingRequests, the session's request bookkeeping, driven alone (no session, no socket)."""

from __future__ import annotations

from gamecodec.archipelago._requests import (
    MAX_CANCELLED,
    MAX_LATE_SCOUTS,
    MAX_REFUSABLE_SETS,
    PendingRequests,
    Unmatched,
)


def test_ids_count_up_from_the_first_and_start_at_random_by_default() -> None:
    requests = PendingRequests(first_id=7)
    assert [requests.add("Get", 0.0), requests.add("Set", 0.0)] == [7, 8]
    assert len(requests) == 2
    starts = {PendingRequests().add("Get", 0.0) for _ in range(8)}
    assert len(starts) == 8 and all(start >= 1 for start in starts)


def test_a_reply_resolves_only_a_pending_request_of_its_kind() -> None:
    requests = PendingRequests(first_id=1)
    get = requests.add("Get", 0.0)
    assert requests.resolve(get, "Set") is None  # a SetReply echoing a Get's id
    assert requests.resolve(None, "Get") is None  # a notice
    assert requests.resolve(get, "Get") == get
    assert requests.resolve(get, "Get") is None and len(requests) == 0


def test_scout_replies_answer_the_oldest_place_in_line() -> None:
    """LocationInfo carries no id: replies come in order, one per scout sent,
    ours or not (send()), pending, cancelled or timed out."""
    requests = PendingRequests(first_id=1)
    assert requests.answer_scout() is None  # no scout due
    first = requests.add("LocationScouts", 0.0)
    requests.add_untracked("LocationScouts")  # sent with send()
    cancelled = requests.add("LocationScouts", 0.0)
    timed_out = requests.add("LocationScouts", 0.0)
    last = requests.add("LocationScouts", 5.0)
    assert requests.cancel(cancelled) and not requests.cancel(cancelled)
    assert requests.expire(1.0, timeout=1.0) == [
        (first, "LocationScouts"),
        (timed_out, "LocationScouts"),
    ]
    answers = [requests.answer_scout() for _ in range(6)]
    assert answers == [
        Unmatched.NOT_OURS,
        Unmatched.NOT_OURS,
        Unmatched.EATEN,
        Unmatched.NOT_OURS,
        last,
        None,
    ]
    assert len(requests) == 0 and requests.remembered == 0


def test_a_cancelled_request_is_eaten_once_and_only_by_its_kind() -> None:
    requests = PendingRequests(first_id=1)
    get = requests.add("Get", 0.0)
    assert requests.cancel(get)
    assert requests.resolve(get, "Get") is None  # no longer pending
    assert not requests.eaten(get, "Set")
    assert requests.eaten(get, "Get") and not requests.eaten(get, "Get")


def test_a_refusal_answers_the_oldest_refusable_set() -> None:
    """The reference refuses a Set of a ``_read_`` key with an InvalidPacket
    naming no id: it answers the oldest such Set sent, ours or another's."""
    requests = PendingRequests(first_id=1)
    assert requests.answer_refusal("Set") is Unmatched.NOT_OURS  # none expected
    requests.add_untracked("Set", refusable=True)
    ours = requests.add("Set", 0.0, refusable=True)
    cancelled = requests.add("Set", 0.0, refusable=True)
    plain = requests.add("Set", 0.0)  # not refusable: a refusal never ends it
    requests.cancel(cancelled)
    assert requests.answer_refusal("Get") is Unmatched.NOT_OURS
    assert requests.answer_refusal("Set") is Unmatched.NOT_OURS  # the untracked one
    assert requests.answer_refusal("Set") == ours
    assert requests.answer_refusal("Set") is Unmatched.EATEN
    assert requests.answer_refusal("Set") is Unmatched.NOT_OURS
    assert requests.resolve(plain, "Set") == plain


def test_deadlines_follow_the_oldest_pending_request() -> None:
    requests = PendingRequests(first_id=1)
    assert requests.next_deadline(30.0) is None
    old = requests.add("Get", 2.0)
    requests.add("Set", 5.0)
    assert requests.next_deadline(None) is None and requests.expire(100.0, None) == []
    assert requests.next_deadline(30.0) == 32.0
    assert requests.expire(31.9, 30.0) == []
    assert requests.expire(32.0, 30.0) == [(old, "Get")]
    assert requests.next_deadline(30.0) == 35.0


def test_what_is_remembered_for_replies_still_due_is_bounded() -> None:
    requests = PendingRequests(first_id=1)
    extra = 3
    for _ in range(MAX_CANCELLED + extra):
        requests.cancel(requests.add("Get", 0.0))
    for _ in range(MAX_LATE_SCOUTS + extra):
        requests.cancel(requests.add("LocationScouts", 0.0))
    for _ in range(MAX_REFUSABLE_SETS + extra):
        requests.add_untracked("Set", refusable=True)
    assert len(requests) == 0
    assert requests.remembered == MAX_CANCELLED + MAX_LATE_SCOUTS + MAX_REFUSABLE_SETS
