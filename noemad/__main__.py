import sys

from noemad.main import main

sys.exit(main())
