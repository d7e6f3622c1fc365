"""The shuffle alarm (issue 14 item 6): is a shoe's order a shuffle of the deck's earlier orders?

`detector` holds the statistic (rising sequences against reference orders, with the exact
Eulerian tail), `collect` the order a round's cards are collected in (a rule reading),
`book` what the table core remembers of each deck's earlier shoes, `simulate` GSR riffles
for `cardshoe bench shuffle`.
"""

from cardshoe.shuffle.detector import ALPHA, MIN_COMPARED, Finding, Reference, Verdict, check, rising_sequences, rising_tail

__all__ = ["ALPHA", "MIN_COMPARED", "Finding", "Reference", "Verdict", "check", "rising_sequences", "rising_tail"]
