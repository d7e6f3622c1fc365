"""The casino floor (issue 14): every table's journal shipped into one store, the linked
progressive's pool settled there, and the floor's view.

`store` (PostgreSQL or SQLite), `progressive` (pure: contributions and a round's hits),
`shipper` and `client` (the table's end), `api` (`cardshoe floor serve`), `audit` (the pool
recomputed from the journals), `pgserver` (this machine's PostgreSQL in a directory).
"""
