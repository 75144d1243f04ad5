"""The benchmark code of `fastgelu bench`, benches/ and tools/: speed comparisons against other libraries,
whole models, instruction counts, processes at once, thread scaling and the ratio judge. Not part of the API:
`import fastgelu` never imports it."""
