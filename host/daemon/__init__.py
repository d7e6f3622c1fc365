"""The host daemon at one table (`cardshoe run`).

- `core.TableCore`: the table's pure state machine (journaled inputs -> events, settlements),
  made of one part per concern: `shoes` (shoe sessions and frames), `play` (rounds),
  `jackpot`, `shufflewatch` (the shuffle alarm), `archive` (checkpoints); `outcome` holds
  the values they share.
- `service.TableService`: applies, journals and publishes inputs, one at a time.
- `control.TableControl`: the table controller's actions (the API's services).
- `daemon.Daemon`: journal + service + shoe link wired together.
- `config`: the table configuration (command line and TOML); `cli.main` is `cardshoe run`.
"""
