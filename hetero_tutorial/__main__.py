from hetero_tutorial.cli import main

raise SystemExit(main())
