"""The shift report: game pace, hold against the exact theoretical, player ratings and a
statistical alarm, from the journals (or the floor's copy of them). See docs/report.md.

- `theory`: exact moments of the house's win per wager component, from the par sheets;
- `shift`: a table's journal entries read into rounds, shoes, flags and who was on;
- `figures`: pace, hold, ratings and flags by table, dealer, shoe, hour, shift, seat, player;
- `alarm`: the statistical alarm (z against the band, Sidak-corrected);
- `live`: the same figures kept up to date inside the daemon and on the floor;
- `render`: the report as JSON, HTML (inline SVG charts) and PDF;
- `cli`: `cardshoe report`.
"""
