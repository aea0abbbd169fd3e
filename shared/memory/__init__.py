"""Consented dietary memory: consent cards, approve/forget via functions/memory (docs/design.md §6)."""
