"""The hardware-in-the-loop bench: virtual or real board, scripted deals, injected faults."""
