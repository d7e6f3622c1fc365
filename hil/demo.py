"""`cardshoe demo`: the main job. One round of Three Card Poker, dealt and settled on a virtual board.

    cardshoe demo [--workdir var/demo] [--seed N] [--game GAME]

It creates the work directory (or empties one the bench made before; any other
existing folder is refused), starts a virtual board (the real firmware on
the MicroPython unix port behind a pseudo-terminal), deploys the firmware with
`cardshoe flash`, starts the daemon (`cardshoe run`) against the board's serial device
with its journal in the work directory, opens a round through the daemon's API with a
few seats and wagers, loads a shoe (the daemon sends NEW_SHOE), deals the cards through
the board's reader and exit sensor in the game's dealing order, presses "deal complete",
sends the players' decisions, has the daemon settle, and prints the hands by seat and the
settlement. It then checks that `cardshoe settle` of the round the daemon exports gives
the same settlement, shuts everything down and exits 0.

Everything printed about the round comes from the daemon (its API and event stream):
the bench only knows which cards it pushed through the shoe.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from cardshoe.cards import parse_card
from cardshoe.hil.bench import Bench, BenchError, TableSpec
from cardshoe.hil.table import ApiError, BenchTimeout
from cardshoe.hil.workdir import WorkdirRefused, fresh_workdir
from cardshoe.poker import evaluate3
from cardshoe.settlement import parse_round, settle

# (seat -> wagers) per game: a few seats, integer minor units.
_WAGERS: dict[str, dict[int, dict[str, int]]] = {
    "three-card-poker": {1: {"ante": 1000, "pair_plus": 500}, 3: {"ante": 2500}, 6: {"ante": 500, "pair_plus": 500}},
    "megalink-three-card-poker": {1: {"ante": 1000, "pair_plus": 500}, 3: {"ante": 2500}, 6: {"ante": 500}},
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardshoe demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", type=Path, default=Path("var/demo"), help="work directory: created and marked by the bench, emptied on the next run; "
                   "an existing folder the bench did not create is refused")
    p.add_argument("--seed", type=int, default=None, help="shuffle of the shoe (default: random)")
    p.add_argument("--game", choices=sorted(_WAGERS), default="three-card-poker")
    return p


def _say(text: str = "") -> None:
    print(text, flush=True)


def _cards(cards: Any) -> str:
    # The API sends cards as text ("As"); null for a card it does not show.
    return " ".join(str(c) if c is not None else "??" for c in cards)


def main(argv: list[str]) -> int:
    """Run the demo; 0 when the round was dealt, settled and cross-checked."""
    args = _parser().parse_args(argv)
    workdir: Path = args.workdir
    try:
        fresh_workdir(workdir, command="cardshoe demo")
    except WorkdirRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    started = time.monotonic()
    bench = Bench(workdir, TableSpec(args.game, seats=7, name="demo"), seed=seed)
    try:
        return _run(bench, args.game, seed, started)
    except (BenchError, BenchTimeout, ApiError) as exc:
        _say(f"\ncardshoe demo: FAILED: {exc}")
        _say(f"(daemon log: {workdir / 'daemon.log'}; board transcript tail: {bench.board.transcript()[-300:]!r})")
        return 1
    finally:
        bench.close()


def _run(bench: Bench, game: str, seed: int, started: float) -> int:
    wd = bench.workdir
    _say(f"== cardshoe demo: {game}, one round on a virtual board (work directory {wd})")
    _say(f"-- virtual board: MicroPython unix port on {bench.board.tty_path}, littlefs flash {bench.board.flash.path}")
    out = bench.flash()
    _say(f"-- firmware deployed ({bench.flashed_with}): shoe serial {bench.serial}, boot {bench.boot}")
    for line in out.strip().splitlines()[-4:]:
        _say("   " + line)
    bench.start_daemon()
    status = bench.client.status()
    _say(f"-- daemon: cardshoe run on {status['port']}, journal {bench.journal}, "
         f"API {bench.client.base_url} (epoch {status['epoch']}); shoe {status['shoe']} said HELLO")
    shoe_no = bench.load_shoe()
    _say(f"-- shoe {shoe_no} loaded: barcode deck {bench.deck_id:#010x} (NEW_SHOE acknowledged by the shoe)")

    api = bench.client
    rid = str(api.request("POST", "/rounds")["round_id"])
    wagers = _WAGERS[game]
    for seat, ws in wagers.items():
        for wager, amount in ws.items():
            api.request("POST", f"/rounds/{rid}/wagers", {"seat": seat, "wager": wager, "amount": amount})
    closed = api.request("POST", f"/rounds/{rid}/no-more-bets")
    snap = api.round(rid)
    places = [p for phase in snap["procedure"]["phases"] for p in phase["places"]]
    _say(f"-- round {rid} open; wagers " + "; ".join(
        f"seat {s}: " + ", ".join(f"{w} {a}" for w, a in ws.items()) for s, ws in sorted(snap["wagers"].items()))
        + f"; no more bets ({len(places)} cards due)")
    del closed

    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    _say(f"-- dealing {len(places)} cards through the shoe's reader and exit sensor (shuffle seed {seed})")
    after = api.last_event_id
    for card in deck[:len(places)]:
        bench.deal(card)
    bench.key("deal_complete")
    for ev in api.events(after, "card_placed"):
        place = ev.data["place"]
        where = f"seat {place['seat']}" if place["kind"] == "seat" else place["kind"]
        _say(f"   shoe card {ev.data['index']:>2}: {ev.data['card']} -> {where} card {place['number']}")

    snap = api.round(rid)
    dealer = snap["hands"].get("dealer", [])
    for seat in snap["procedure"]["seats"]:
        held = [parse_card(c) for c in snap["hands"][f"seat {seat}"]]
        # A common basic strategy: play Q-6-4 or better (the bench's choice, not a rule).
        choice = "play" if evaluate3(held).strength >= evaluate3(_Q64).strength else "fold"
        api.request("POST", f"/rounds/{rid}/decisions", {"seat": seat, "choice": choice})
    done = api.request("POST", f"/rounds/{rid}/settle", {})
    snap = api.round(rid)
    settlement = done["settlement"]

    _say("\n== Hands by seat (from the daemon)")
    for label, cards in snap["hands"].items():
        _say(f"   {label:<10} {_cards(cards)}")
    if dealer:
        d = settlement.get("dealer") or {}
        _say(f"   dealer hand: {d.get('hand')}, {'qualifies' if d.get('qualifies') else 'does not qualify'} "
             f"(rules {', '.join(d.get('rules', []))})")
    _say("\n== Decisions: " + ", ".join(f"seat {s} {'/'.join(c)}" for s, c in snap["decisions"].items()))
    _say("\n== Settlement (from the daemon)")
    _say(f"   {'seat':<5} {'hand':<16} {'wager':<11} {'stake':>7} {'outcome':<8} {'paid':>8} {'net':>8}  rules")
    for seat in settlement["seats"]:
        hand = (seat.get("hands", {}).get("player") or {}).get("hand", "")
        for w in seat["wagers"]:
            _say(f"   {seat['seat']:<5} {hand:<16} {w['wager']:<11} {w['stake']:>7} {w['outcome']:<8} "
                 f"{w['paid']:>8} {w['net']:>8}  {', '.join(w['rules'])}")
            hand = ""
    totals = settlement.get("totals", {})
    _say(f"   totals: stake {totals.get('stake')}, paid {totals.get('paid')}, net to players {totals.get('net')} "
         f"({settlement.get('currency')} minor units; rules version {settlement.get('rules_version')})")
    if settlement.get("void"):
        _say(f"   the round is VOID: {settlement['void']}")
    flags = snap.get("irregularities", [])
    _say(f"   irregularities: {len(flags)}" + "".join(f"\n     {f['kind']} rules {f['rules']}: {f['decision']}"
                                                    for f in flags))

    offline = settle(parse_round(api.export(rid))).to_json()
    same = offline == settlement
    _say(f"\n-- `cardshoe settle` of the round the daemon exports: {'the same settlement' if same else 'DIFFERENT'}")
    status = api.status()
    link = status.get("link") or {}
    _say(f"-- link: {link.get('frames_accepted')} frames accepted, {link.get('duplicates')} duplicates dropped, "
         f"{link.get('gaps')} gaps, rejected {link.get('rejected')}")
    rc = bench.stop_daemon()
    bench.board.power_off()
    _say(f"-- daemon stopped (exit {rc}), shoe powered off; journal kept at {bench.journal} "
         f"(`cardshoe replay {bench.journal}` rebuilds it) -- {time.monotonic() - started:.1f} s")
    if not same:
        return 1
    return 0 if rc == 0 else 1


_Q64 = (42, 17, 11)  # Qh 6d 4s: the usual threshold hand for playing


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
