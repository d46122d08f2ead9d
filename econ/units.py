"""Constants and unit conversions. Nothing else lives here.

Every conversion from a datasheet unit (GB, TB/s, TFLOP/s, kW) to SI happens once, in
`econ.tables.catalog`, using these constants; formulas never contain a bare ``1e9``.
"""

HOURS_PER_YEAR = 8760.0
"""Hours in a (non-leap) year, the convention of capital-recovery and $/GPU-hour math. [h]"""
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
BYTES_PER_GB = 1e9
"""Datasheet gigabyte of bandwidths (TB/s, GB/s): 10^9 bytes. HBM *capacity* 'GB' on NVIDIA/AMD/
Intel/Google datasheets is binary (H100 80 GB = 5 stacks x 16 GiB; nvidia-smi shows 81,559 MiB), so
capacities are stored in GiB and converted with BYTES_PER_GIB."""
BYTES_PER_GIB = 2.0**30
BYTES_PER_TB = 1e12
FLOP_PER_TFLOP = 1e12
PER_TERA = 1e12
"""A count per second in units of 10^12 (exponentials per second: ``exp_tera_per_s``)."""
W_PER_KW = 1e3
W_PER_MW = 1e6
TOKENS_PER_M = 1e6
"""Prices are quoted per million tokens."""
