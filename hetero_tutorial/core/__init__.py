"""The ground every other folder stands on: devices and placements, timing, copies, records.

Nothing here imports another folder of the package.
"""
