"""What the notebooks show: one report module per notebook, and what several of them share.

Each notebook imports the package's top and its own report module,
``<topic>_report.py`` (timing 00, baseline 01, profile 02, hybrid 03, buffer 04,
allocator 05, overlap 06, device_envs 07, compile 08, ledger 09): the tables, sentences and figures
only it shows, each written from the numbers passed in. Shared: ``plots`` (figures of PPO
runs), ``tables`` (Markdown tables, PPO's copies per step), ``diagrams`` (the pipeline,
drawn from the placements), ``code`` (``source()``: the code that runs), ``progress``,
``exercises`` (``check()``) and ``solutions/`` (looked up by name, never imported).
"""
