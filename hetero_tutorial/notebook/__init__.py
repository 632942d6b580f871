"""What the notebooks show: plots, tables and reports, exercises and their solutions."""
