"""TIDE: a revision benchmark over synthetic project histories (DESIGN §10).

``generator`` makes streams and probes, ``systems`` and ``baselines`` produce injected
blocks, ``score`` turns them into NTU and harmful rates, ``run`` is ``dynmem bench tide``.
"""
