"""How well the rules client reads that something was removed, on messages written without reading it."""
