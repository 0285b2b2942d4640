import sys

from nnd_suites.cli import main

sys.exit(main())
