"""The ``specedit`` command line: ``main`` (the commands), ``flags`` (the one parser and the
``LoadConfig`` it asks for), ``doctor`` (the bug-report summary), ``progress`` (progress bars).
"""
