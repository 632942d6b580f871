from hetero_tutorial.app.cli import main

raise SystemExit(main())
