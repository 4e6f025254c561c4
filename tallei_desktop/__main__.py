from tallei_desktop.cli import main

raise SystemExit(main())
