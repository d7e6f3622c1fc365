"""`cardshoe hil soak`: many shoes in a row with random faults, every round checked.

    cardshoe hil soak --cards 2000 --corrupt 0.01 --drop 0.01 --power-cut-every 5 \\
        --restart-every 7 --seed 1

One virtual table (board, fault relay, daemon) deals shuffled shoes round after round
until `--cards` cards have left the shoe. Each round has a random number of seats with
random wagers. Line faults (`--corrupt`: per byte, a bit flipped; `--drop`: per frame,
lost; `--drop-bytes`: per byte, lost) apply all the time, both ways. Every
`--power-cut-every` rounds the shoe's power is cut at a random moment mid-deal (right
after a card's exit sensor fired, before or after the shoe logged it); every
`--restart-every` rounds the daemon is SIGKILLed mid-deal and started again; every
`--unplug-every` rounds the USB cable is pulled mid-deal. After each round the bench
checks that every card it dealt is in the daemon's round exactly once, at its shoe index,
with its code, and that the daemon's settlement equals `cardshoe settle` of the round it
exports. It prints the totals; the exit status is 1 when any check failed.

A card that the shoe had not logged when its power was cut is on the table but in no
record (the interpreter died before it saw the exit sensor). The bench never deals it
again: the daemon flags the round under the power-failure rule (5.16; cardshoe.rounds.
powerfail), and the bench's supervisor, seeing a card on the table the round does not
hold, refuses the flag (the round is void, every wager returned); after a cut that lost
nothing the supervisor lets the round stand. The totals show how often a card was lost.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardshoe.argtypes import non_negative_int, positive_int, probability
from cardshoe.hil.bench import FOREIGN_DECK, Bench, TableSpec
from cardshoe.hil.relay import LineFaults
from cardshoe.hil.runner import RoundOutcome, check_round
from cardshoe.hil.scenario import RoundSpec
from cardshoe.hil.table import ApiError, BenchTimeout
from cardshoe.poker import evaluate3
from cardshoe.settlement import parse_round, settle

_Q64 = (42, 17, 11)  # Qh 6d 4s


@dataclass
class SoakTotals:
    """What a soak did and found."""

    cards_dealt: int = 0
    rounds: int = 0
    shoes: int = 0
    rounds_void: dict[str, int] = field(default_factory=dict)
    lost: int = 0
    repeated: int = 0
    mismatches: int = 0
    problems: list[str] = field(default_factory=list)
    duplicates_dropped: int = 0
    gaps_resent: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    power_cuts: int = 0
    lost_in_power_cut: int = 0
    daemon_restarts: int = 0
    unplugs: int = 0
    card_faults: dict[str, int] = field(default_factory=dict)
    line: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The totals as plain JSON."""
        return dict(self.__dict__)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardshoe hil soak", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `cardshoe hil soak`."""
    p.add_argument("--cards", type=positive_int, default=2000, help="deal at least this many cards (default 2000)")
    p.add_argument("--corrupt", type=probability, default=0.01, help="per byte: one bit flipped (default 0.01)")
    p.add_argument("--drop", type=probability, default=0.01, help="per frame: the whole frame lost (default 0.01)")
    p.add_argument("--drop-bytes", type=probability, default=0.0, help="per byte: lost (default 0)")
    p.add_argument("--power-cut-every", type=non_negative_int, default=5, metavar="K", help="cut the shoe's power every K rounds")
    p.add_argument("--restart-every", type=non_negative_int, default=7, metavar="K", help="kill and restart the daemon every K rounds")
    p.add_argument("--unplug-every", type=non_negative_int, default=0, metavar="K", help="pull the USB cable every K rounds")
    p.add_argument("--card-faults", type=probability, default=0.0, metavar="P",
                   help="per round: one foreign, duplicate or unread card among the deal (default 0)")
    p.add_argument("--game", default="three-card-poker", choices=("three-card-poker", "megalink-three-card-poker"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", type=Path, default=Path("var/soak"), help="work directory (wiped first)")
    p.add_argument("--json", action="store_true", help="print the totals as JSON too")


def main(argv: list[str]) -> int:
    """Run the soak; 0 when nothing was lost or repeated and every settlement matched."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """`cardshoe hil soak` with parsed arguments."""
    if args.workdir.exists():
        shutil.rmtree(args.workdir)
    line = LineFaults(corrupt=args.corrupt, drop_frames=args.drop, drop_bytes=args.drop_bytes)
    totals = soak(args.workdir, game=args.game, cards=args.cards, line=line, seed=args.seed,
                  power_cut_every=args.power_cut_every, restart_every=args.restart_every,
                  unplug_every=args.unplug_every, card_faults=args.card_faults, log=lambda m: print(m, flush=True))
    print(f"$ cardshoe hil soak --cards {args.cards} --corrupt {args.corrupt} --drop {args.drop} "
          f"--drop-bytes {args.drop_bytes} --power-cut-every {args.power_cut_every} "
          f"--restart-every {args.restart_every} --unplug-every {args.unplug_every} "
          f"--card-faults {args.card_faults} --game {args.game} "
          f"--seed {args.seed}")
    print_totals(totals)
    if args.json:
        print(json.dumps(totals.to_json(), indent=2, sort_keys=True))
    bad = totals.lost or totals.repeated or totals.mismatches or totals.problems
    return 1 if bad else 0


def print_totals(t: SoakTotals) -> None:
    """The soak's totals, one per line."""
    void = ", ".join(f"{why}: {n}" for why, n in sorted(t.rounds_void.items())) or "none"
    print(f"cards dealt          {t.cards_dealt} in {t.rounds} rounds, {t.shoes} shoes ({t.seconds:.0f} s)")
    print(f"frames resent        {t.duplicates_dropped} duplicates dropped, {t.gaps_resent} gaps asked again "
          f"(RESEND_FROM)")
    print(f"frames rejected      {t.rejected or 'none'}")
    print(f"faults injected      line {t.line}; power cuts {t.power_cuts} ({t.lost_in_power_cut} cards left "
          f"unlogged, their rounds flagged 5.16 and void); daemon restarts {t.daemon_restarts}; unplugs {t.unplugs}; "
          f"cards {t.card_faults or 'none'}")
    print(f"rounds void          {void}")
    print(f"lost cards           {t.lost}")
    print(f"repeated cards       {t.repeated}")
    print(f"settlement mismatches {t.mismatches}")
    for p in t.problems[:20]:
        print(f"  problem: {p}")


def soak(workdir: Path, *, game: str, cards: int, line: LineFaults, seed: int, power_cut_every: int,
         restart_every: int, unplug_every: int = 0, card_faults: float = 0.0, log: Any = print) -> SoakTotals:
    """Deal at least `cards` cards with faults; returns the totals."""
    rng = random.Random(seed)
    totals = SoakTotals()
    started = time.monotonic()
    bench = Bench(workdir, TableSpec(game, 7, name="soak"), line=line, seed=seed, log=log)
    try:
        bench.flash()
        bench.start_line(line)
        bench.start_daemon()
        shoe: list[int] = []
        while totals.cards_dealt < cards:
            seats = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
            # Megalink deals three community cards (one burned) besides the seats and dealer.
            if len(shoe) < 3 * len(seats) + 3 + (3 if game.startswith("megalink") else 0):
                bench.load_shoe(bench.deck_id + 1 if totals.shoes else None)
                shoe = list(range(52))
                rng.shuffle(shoe)
                totals.shoes += 1
            totals.rounds += 1
            n = totals.rounds
            fault = None
            if power_cut_every and n % power_cut_every == 0:
                fault = "power_cut"
            elif restart_every and n % restart_every == 0:
                fault = "restart"
            elif unplug_every and n % unplug_every == 0:
                fault = "unplug"
            try:
                card_fault = rng.choice(("foreign", "duplicate", "unread")) if rng.random() < card_faults else None
                _soak_round(bench, rng, seats, shoe, fault, totals, card_fault)
            except BenchTimeout as exc:
                raise BenchTimeout(f"round {n} ({fault or 'no fault'}): {exc} [{bench.diagnose()}]") from exc
            if n % 10 == 0:
                log(f"  round {n}: {totals.cards_dealt} cards, {totals.mismatches} mismatches, "
                    f"{totals.lost} lost, {totals.repeated} repeated")
        _collect_link(bench, totals)
    finally:
        if bench.relay is not None:
            totals.line = {k: v for k, v in bench.relay.counts.to_json().items()
                           if k not in ("bytes_to_host", "bytes_to_shoe") and v}
        totals.power_cuts = bench.counts.power_cuts
        totals.daemon_restarts = bench.counts.daemon_restarts
        totals.unplugs = bench.counts.unplugs
        totals.lost_in_power_cut = bench.counts.lost_in_power_cut
        totals.seconds = time.monotonic() - started
        bench.close()
    return totals


def _collect_link(bench: Bench, totals: SoakTotals) -> None:
    """Add the daemon's link counters (they restart with the daemon) to the totals."""
    status = bench.client.try_status() or {}
    link = status.get("link") or {}
    totals.duplicates_dropped += int(link.get("duplicates", 0))
    totals.gaps_resent += int(link.get("gaps", 0))
    for reason, count in (link.get("rejected") or {}).items():
        totals.rejected[reason] = totals.rejected.get(reason, 0) + int(count)


def _soak_round(bench: Bench, rng: random.Random, seats: list[int], shoe: list[int], fault: str | None,
                totals: SoakTotals, card_fault: str | None = None) -> None:
    api = bench.client
    wagers = {s: {"ante": rng.choice((500, 1000, 2500))} for s in seats}
    for s in seats:
        if rng.random() < 0.5:
            wagers[s]["pair_plus"] = rng.choice((500, 1000))
    rid = str(api.request("POST", "/rounds")["round_id"])
    for s, ws in wagers.items():
        for w, a in ws.items():
            api.request("POST", f"/rounds/{rid}/wagers", {"seat": s, "wager": w, "amount": a})
    api.request("POST", f"/rounds/{rid}/no-more-bets")
    due = sum(len(ph["places"]) for ph in api.round(rid)["procedure"]["phases"])
    out = RoundOutcome(round_id=rid)
    fault_at = rng.randrange(due) if fault else -1
    # A card fault takes one dealing slot: a foreign or duplicate card is an extra physical
    # card (the shoe's next card stays), an unread one is the next card, not read.
    bad_at = rng.choice([k for k in range(1, due) if k != fault_at]) if card_fault else -1
    i = 0
    while i < due:
        card = shoe[0]
        if i == bad_at:
            totals.card_faults[card_fault or ""] = totals.card_faults.get(card_fault or "", 0) + 1
            if card_fault == "foreign":
                index = bench.deal(card, reads=[bench.barcode(card, FOREIGN_DECK)])
                out.dealt[index] = ("foreign", card)
            elif card_fault == "duplicate":
                first = out.dealt[min(out.dealt)][1]
                out.dealt[bench.deal(first)] = ("card", first)
            else:
                out.dealt[bench.deal(None)] = ("unread", card)
                shoe.pop(0)
            totals.cards_dealt += 1
            i += 1
            continue
        if i == fault_at:
            _fault_mid_card(bench, rng, card, fault or "", out, totals)
        else:
            out.dealt[bench.deal(card)] = ("card", card)
        shoe.pop(0)
        totals.cards_dealt += 1
        i += 1
    bench.key("deal_complete")
    snap = api.round(rid)
    for s in seats:
        hand = snap["hands"].get(f"seat {s}")
        if hand is None or len(hand) != 3 or snap.get("void"):
            continue
        choice = "play" if evaluate3(hand).strength >= evaluate3(_Q64).strength else "fold"
        try:
            api.request("POST", f"/rounds/{rid}/decisions", {"seat": s, "choice": choice})
        except ApiError as exc:
            out.refusals.append(str(exc))
    done = api.request("POST", f"/rounds/{rid}/settle", {})
    out.settlement = (done.get("settlement") or {}).get("settlement")
    out.snapshot = api.round(rid)
    out.offline = settle(parse_round(api.export(rid))).to_json()
    spec = RoundSpec(wagers=wagers, deal=())
    for p in check_round(spec, out):
        totals.problems.append(f"{rid}: {p}")
        if p.startswith("shoe indices differ"):
            totals.lost += 1
        elif "settlement" in p:
            totals.mismatches += 1
        else:
            totals.repeated += 1
    indices = [int(k) for k in out.snapshot.get("cards", {})]
    if len(indices) != len(set(indices)):
        totals.repeated += 1
    void = out.snapshot.get("void")
    if void:
        # Grouped by rule and kind (the reason's first words), e.g. "5.1 foreign".
        if isinstance(void, dict):
            why = f"{'/'.join(void.get('rules', [])) or '?'} {str(void.get('reason', '')).split(':')[0]}".strip()
        else:
            why = str(void)
        totals.rounds_void[why] = totals.rounds_void.get(why, 0) + 1


def _answer_power_flags(bench: Bench, rid: str, *, confirmed: bool) -> None:
    """The supervisor's answer to the round's open power-failure flags (the daemon raised
    them with the HELLO that `Bench.power_cut` waited for)."""
    api = bench.client
    for flag in api.round(rid)["irregularities"]:
        if flag["kind"] == "power_failure" and flag["decision"] == "referred":
            api.request("POST", f"/rounds/{rid}/confirmations",
                        {"flag": flag["id"], "confirmed": confirmed, "supervisor": "soak supervisor"})


def _fault_mid_card(bench: Bench, rng: random.Random, card: int, fault: str, out: RoundOutcome,
                    totals: SoakTotals) -> None:
    """Deal `card` and hit the table with `fault` while its frames may be in flight."""
    index = bench.next_index()
    after = bench.client.last_event_id
    bench.deal(card, wait=False)
    time.sleep(rng.uniform(0.0, 0.03))
    if fault == "power_cut":
        logged = bench.power_cut()
        lost = logged is not None and logged < index
        # The shoe rebooted mid-deal: the round carries a power-failure flag (5.16). The
        # supervisor checks the table: a card the shoe never logged is there and not in the
        # round (refused: the round is void); otherwise the round stands (see module doc).
        _answer_power_flags(bench, out.round_id, confirmed=not lost)
        if lost:
            bench.counts.lost_in_power_cut += 1
            return  # on the table, in no record: never dealt again
        bench.wait_card(index)
    elif fault == "restart":
        _collect_link(bench, totals)
        bench.restart_daemon()
        bench.wait_card(index)
    elif fault == "unplug":
        bench.unplug(rng.uniform(0.1, 0.6))
        bench.wait_card(index)
    del after
    out.dealt[index] = ("card", card)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
