"""corral's benchmarks: ``make bench`` (``python -m benchmarks``). Each prints ratios against an
anchor measured in the same run; they are not timed tests."""
