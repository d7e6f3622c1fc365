"""cardshoe host side: the daemon at the table, the game engine and the tools."""
