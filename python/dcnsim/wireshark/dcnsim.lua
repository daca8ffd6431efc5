-- Wireshark / tshark dissectors for the frames dcnsim captures that Wireshark has none
-- for (docs/capture.md): IEEE 802.1Qau Congestion Notification Messages (EtherType
-- 0x22E7), IEEE 802.1Qcz Congestion Isolation Messages (0x89A2, laid out as a CNM), SFC
-- messages (UDP port 65472, dcnsim's layout: P802.1Qdw publishes none) and Directional
-- Rate Control frames (MAC Control opcode 0xFF01, seed 001). PAUSE, PFC, IPv4 with its ECN
-- field, TCP, UDP and RoCEv2 are Wireshark's own; a RoCEv2 frame cut by the capture's
-- snaplen is handed to Wireshark's dissector as the frame it captured, which it then
-- dissects (it would call the whole frame malformed: "Invalid Packet Length from LRH!").
--
--   wireshark -X lua_script:dcnsim.lua capture.pcapng
--   tshark -X lua_script:dcnsim.lua -r capture.pcapng -Y cnm -T fields -e cnm.qntzfb
--
-- The file's path: python -c "import dcnsim; print(dcnsim.WIRESHARK_PLUGIN)"

local function cn_fields(abbrev)
    return {
        version = ProtoField.uint16(abbrev .. ".version", "Version", base.DEC, nil, 0xF000),
        reserved = ProtoField.uint16(abbrev .. ".reserved", "ReservedV", base.HEX, nil, 0x0FC0),
        qntzfb = ProtoField.uint16(abbrev .. ".qntzfb", "Quantized feedback (QntzFb)", base.DEC, nil, 0x003F),
        cpid = ProtoField.bytes(abbrev .. ".cpid", "Congestion point identifier (CPID)"),
        cpid_mac = ProtoField.ether(abbrev .. ".cpid.mac", "CPID switch address"),
        cpid_port = ProtoField.uint16(abbrev .. ".cpid.port", "CPID port", base.DEC, nil, 0xFFF8),
        cpid_class = ProtoField.uint16(abbrev .. ".cpid.class", "CPID traffic class", base.DEC, nil, 0x0007),
        qoffset = ProtoField.int16(abbrev .. ".qoffset", "Queue offset (64-octet units)"),
        qdelta = ProtoField.int16(abbrev .. ".qdelta", "Queue delta (64-octet units)"),
        encap_priority = ProtoField.uint16(abbrev .. ".encap_priority", "Encapsulated priority", base.DEC, nil, 0xE000),
        encap_da = ProtoField.ether(abbrev .. ".encap_da", "Encapsulated destination address"),
        encap_len = ProtoField.uint16(abbrev .. ".encap_msdu_len", "Encapsulated MSDU length"),
        encap = ProtoField.bytes(abbrev .. ".encap_msdu", "Encapsulated MSDU"),
        encap_src = ProtoField.ipv4(abbrev .. ".encap.ip_src", "Encapsulated IPv4 source"),
        encap_dst = ProtoField.ipv4(abbrev .. ".encap.ip_dst", "Encapsulated IPv4 destination"),
        encap_proto = ProtoField.uint8(abbrev .. ".encap.ip_proto", "Encapsulated IP protocol"),
        encap_sport = ProtoField.uint16(abbrev .. ".encap.sport", "Encapsulated source port"),
        encap_dport = ProtoField.uint16(abbrev .. ".encap.dport", "Encapsulated destination port"),
    }
end

local function cn_dissect(proto, f, name, tvb, pinfo, tree)
    pinfo.cols.protocol = name
    local t = tree:add(proto, tvb(), name)
    t:add(f.version, tvb(0, 2))
    t:add(f.reserved, tvb(0, 2))
    t:add(f.qntzfb, tvb(0, 2))
    local cpid = t:add(f.cpid, tvb(2, 8))
    cpid:add(f.cpid_mac, tvb(2, 6))
    cpid:add(f.cpid_port, tvb(8, 2))
    cpid:add(f.cpid_class, tvb(8, 2))
    t:add(f.qoffset, tvb(10, 2))
    t:add(f.qdelta, tvb(12, 2))
    t:add(f.encap_priority, tvb(14, 2))
    t:add(f.encap_da, tvb(16, 6))
    t:add(f.encap_len, tvb(22, 2))
    local flow = ""
    if tvb:len() > 24 then
        local e = t:add(f.encap, tvb(24))
        -- the flow the reaction point identifies from the encapsulated IPv4 header and
        -- ports (not dissected as a packet: only its first octets are there)
        if tvb:len() >= 48 and bit.rshift(tvb(24, 1):uint(), 4) == 4 then
            local ihl = bit.band(tvb(24, 1):uint(), 0x0F) * 4
            e:add(f.encap_proto, tvb(33, 1))
            e:add(f.encap_src, tvb(36, 4))
            e:add(f.encap_dst, tvb(40, 4))
            if tvb:len() >= 24 + ihl + 4 then
                e:add(f.encap_sport, tvb(24 + ihl, 2))
                e:add(f.encap_dport, tvb(26 + ihl, 2))
                flow = string.format(" flow %s:%d -> %s:%d", tostring(tvb(36, 4):ipv4()), tvb(24 + ihl, 2):uint(), tostring(tvb(40, 4):ipv4()), tvb(26 + ihl, 2):uint())
            end
        end
    end
    if name == "CNM" then
        pinfo.cols.info = string.format("CNM QntzFb=%d qOffset=%d qDelta=%d%s", bit.band(tvb(0, 2):uint(), 0x3F), tvb(10, 2):int(), tvb(12, 2):int(), flow)
    else
        pinfo.cols.info = "CIM isolate" .. flow
    end
end

local cnm = Proto("cnm", "IEEE 802.1Qau Congestion Notification Message")
local cnm_f = cn_fields("cnm")
for _, v in pairs(cnm_f) do table.insert(cnm.fields, v) end
function cnm.dissector(tvb, pinfo, tree) cn_dissect(cnm, cnm_f, "CNM", tvb, pinfo, tree) end

local cim = Proto("cim", "IEEE 802.1Qcz Congestion Isolation Message")
local cim_f = cn_fields("cim")
for _, v in pairs(cim_f) do table.insert(cim.fields, v) end
function cim.dissector(tvb, pinfo, tree) cn_dissect(cim, cim_f, "CIM", tvb, pinfo, tree) end

local ethertype = DissectorTable.get("ethertype")
ethertype:add(0x22E7, cnm)
ethertype:add(0x89A2, cim)

local sfc = Proto("sfc", "Source Flow Control message (P802.1Qdw, dcnsim layout)")
local sfc_f = {
    version = ProtoField.uint8("sfc.version", "Version"),
    class = ProtoField.uint8("sfc.class", "Traffic class"),
    pause_ns = ProtoField.uint32("sfc.pause_ns", "Pause (ns)"),
    flow_dst = ProtoField.ipv4("sfc.flow_dst", "Paused flow's destination"),
    flow_sport = ProtoField.uint16("sfc.flow_sport", "Paused flow's source port"),
    flow_dport = ProtoField.uint16("sfc.flow_dport", "Paused flow's destination port"),
}
for _, v in pairs(sfc_f) do table.insert(sfc.fields, v) end
function sfc.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "SFC"
    local t = tree:add(sfc, tvb(), "SFC message")
    t:add(sfc_f.version, tvb(0, 1))
    t:add(sfc_f.class, tvb(1, 1))
    t:add(sfc_f.pause_ns, tvb(2, 4))
    t:add(sfc_f.flow_dst, tvb(6, 4))
    t:add(sfc_f.flow_sport, tvb(10, 2))
    t:add(sfc_f.flow_dport, tvb(12, 2))
    pinfo.cols.info = string.format("SFC pause class %d for %d ns, flow to %s:%d", tvb(1, 1):uint(), tvb(2, 4):uint(), tostring(tvb(6, 4):ipv4()), tvb(12, 2):uint())
end
DissectorTable.get("udp.port"):add(65472, sfc)

-- DRC frames share MAC Control's EtherType: take the opcode 0xFF01 and hand every other
-- MAC Control frame to Wireshark's own dissector
local macc = ethertype:get_dissector(0x8808)
local drc = Proto("drc", "Directional Rate Control (seed 001)")
local drc_f = {
    opcode = ProtoField.uint16("drc.opcode", "Opcode", base.HEX),
    mask = ProtoField.uint8("drc.priority_mask", "Priority mask", base.HEX),
    direction = ProtoField.uint16("drc.direction", "First direction (port)"),
    directions = ProtoField.uint16("drc.directions", "Directions (bit i: first + i)", base.HEX),
    severity = ProtoField.uint8("drc.severity", "Severity"),
}
for _, v in pairs(drc_f) do table.insert(drc.fields, v) end
function drc.dissector(tvb, pinfo, tree)
    if tvb:len() < 8 or tvb(0, 2):uint() ~= 0xFF01 then
        return macc:call(tvb, pinfo, tree)
    end
    pinfo.cols.protocol = "DRC"
    local t = tree:add(drc, tvb(), "DRC frame")
    t:add(drc_f.opcode, tvb(0, 2))
    t:add(drc_f.mask, tvb(2, 1))
    t:add(drc_f.direction, tvb(3, 2))
    t:add(drc_f.directions, tvb(5, 2))
    t:add(drc_f.severity, tvb(7, 1))
    -- first direction 0xFFFF: every direction of the sender's input (its whole fill,
    -- input_fill = "direction_or_input"); else the ports first + i for each bit i set
    local first, bits = tvb(3, 2):uint(), tvb(5, 2):uint()
    local dir = "every direction"
    if first ~= 0xFFFF then
        local names = {}
        for i = 0, 15 do
            if bit.band(bits, bit.lshift(1, i)) ~= 0 then table.insert(names, tostring(first + i)) end
        end
        dir = "directions " .. table.concat(names, ",")
    end
    pinfo.cols.info = string.format("DRC %s severity %d", dir, tvb(7, 1):uint())
end
ethertype:add(0x8808, drc)

-- RoCEv2 (UDP port 4791) frames cut by the snaplen: Wireshark's InfiniBand dissector
-- takes the packet's length from the reported length and, finding fewer bytes, calls
-- the frame malformed. Given the captured bytes as the packet, it dissects the BTH (and
-- RETH, AETH) as they are; the payload it shows is the cut one, and the 4 bytes it
-- reads as the Invariant CRC are the last captured payload bytes, which the note says.
local udp_port = DissectorTable.get("udp.port")
local rroce = udp_port:get_dissector(4791)
local cut = Proto("roce_cut", "RoCEv2 frame cut by the capture's snaplen")
local cut_f = {
    captured = ProtoField.uint32("roce_cut.captured", "UDP payload bytes captured"),
    length = ProtoField.uint32("roce_cut.length", "UDP payload bytes on the wire"),
}
for _, v in pairs(cut_f) do table.insert(cut.fields, v) end
function cut.dissector(tvb, pinfo, tree)
    local captured, length = tvb:len(), tvb:reported_len()
    if captured >= length then
        return rroce:call(tvb, pinfo, tree)
    end
    local n = rroce:call(tvb(0, captured):tvb(), pinfo, tree)
    local t = tree:add(cut, tvb(), string.format("[Cut by the snaplen: %d of %d UDP payload bytes captured; the payload and Invariant CRC above are of the cut frame]", captured, length))
    t:add(cut_f.captured, captured):set_generated()
    t:add(cut_f.length, length):set_generated()
    pinfo.cols.info:append(" [cut by snaplen]")
    return n
end
udp_port:add(4791, cut)
