"""Token accounting: counters (heuristic and exact) and the ledger that keeps counts cheap."""
