# Data-mining flow-size distribution.
#
# Source paper: A. Greenberg et al., "VL2: A Scalable and Flexible Data Center
#   Network", ACM SIGCOMM 2009 (flow sizes in a data-mining / analytics cluster),
#   in the form used by pFabric (Alizadeh et al., SIGCOMM 2013) and the ns-2
#   simulations derived from it (PIAS, MQ-ECN, ...): the file CDF_vl2.tcl.
# Numbers taken from: HKUST-SING/MQ-ECN-NS2, path scripts/CDF_vl2.tcl
#   (commit 33e9d4175aadddaa559e247767d546c14ac1cf76). Its companion script
#   scripts/run_simulation_vl2.py sets meanFlowSize = 5117*1460 bytes.
# Units: size in bytes, cumulative probability in [0,1].
# Conversions made:
#   - the source is an ns-2 EmpiricalRandomVariable table "<packets> 1 <cdf>" with
#     sizes in packets of 1460 bytes (MSS); every size was multiplied by 1460.
#   - the source starts with two points at 1 packet ("1 1 0" and "1 1 0.5"), i.e.
#     50% of flows are exactly one packet; this is written as a single first point
#     "1460 0.5" (probability mass 0.5 at 1460 bytes).
# Mean of the piecewise-linear distribution: ~7.47 MB; max ~973 MB; 80% of flows
# are <= 7 packets (10220 B).
1460 0.5
2920 0.6
4380 0.7
10220 0.8
389820 0.9
3076220 0.95
97333820 0.99
973333820 1.0
