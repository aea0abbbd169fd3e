"""Consented dietary memory: consent cards, approve/forget via functions/memory (DESIGN §6)."""
