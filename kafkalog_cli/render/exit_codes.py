"""Exit codes shared by every command.

0: clean (nothing found, or the work completed); 1: findings (problems found, or a dry
run found work); 2: usage error; 3: unreadable or not-Kafka input.
"""

OK = 0
FINDINGS = 1
USAGE = 2
UNREADABLE = 3
