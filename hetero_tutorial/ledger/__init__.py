"""The article's claims as data, the rules that judge them, and the ledger across machines."""
