"""Histories written independently of the code, with probes: the check that nothing was tuned on them."""
