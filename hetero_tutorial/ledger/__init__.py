"""The article's figures and claims as data, the rules that judge each claim, the verdicts
on every machine, and the advice for this one."""
