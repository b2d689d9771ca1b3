"""The hostile-input battery: real hostile files built in a temporary folder, one module per
class of case, every risky case run in a child process bounded in memory and time
(:mod:`tests.hostile.bounded`), so a regression fails its test instead of exhausting the
machine. ``docs/security.md`` names the test that holds each defence."""
