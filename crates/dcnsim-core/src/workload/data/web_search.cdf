# Web-search flow-size distribution.
#
# Source paper: M. Alizadeh et al., "Data Center TCP (DCTCP)", ACM SIGCOMM 2010
#   (flow sizes of background traffic in a production web-search cluster).
# Numbers taken from: alibaba-edu/High-Precision-Congestion-Control (HPCC ns-3),
#   path traffic_gen/WebSearch_distribution.txt (commit 9cf8b9e8c8d04a3775e06c972c4699dcbce53c37).
#   The same table ships with datacenter/empirical-traffic-gen (DCTCP_CDF) and
#   conweave-project/conweave-ns3 (workloads/DCTCP_CDF.txt). pFabric's ns-2
#   CDF_search/CDF_dctcp.tcl is the same distribution expressed in 1460-byte packets.
# Units: size in bytes, cumulative probability in [0,1].
# Conversions made:
#   - the source gives probabilities in percent (0..100); divided by 100 here.
#   - the source's first point is "0 0" (size 0 bytes, 0%); size 0 is not allowed
#     in this format, so it is written as "1 0". This only moves the lower end of
#     the first interpolation segment from 0 to 1 byte (mean changes by +0.075 B).
# Mean of the piecewise-linear distribution: ~1.71 MB (HPCC's getAvg() gives 1711250 B).
1 0
10000 0.15
20000 0.2
30000 0.3
50000 0.4
80000 0.53
200000 0.6
1000000 0.7
2000000 0.8
5000000 0.9
10000000 0.97
30000000 1.0
