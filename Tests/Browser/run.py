"""Runs the browser tests: `python3 Tests/Browser/run.py [test names...]` (deploy/test calls this)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
loader = unittest.TestLoader()
names = sys.argv[1:]
suite = loader.loadTestsFromNames(names) if names else loader.discover(os.path.dirname(os.path.abspath(__file__)), pattern='test_*.py')
result = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if result.wasSuccessful() else 1)
