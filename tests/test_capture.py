"""Packet captures (`[metrics] capture`, docs/capture.md): the pcapng file holds every frame
the captured ports sent, with the encodings the run's state means. Checked three ways: the
file's frames against the run's own counters (frames per port, PFC frames, ECN marks,
CNMs, CIMs), the bytes against the standards' layouts (read here with a small pcapng
reader), and Wireshark's dissection (tshark, with dcnsim's Lua dissectors for CNM, CIM,
SFC and DRC) against both. The tshark tests are skipped where tshark is not installed,
unless DCNSIM_REQUIRE_TSHARK is set (CI installs it).
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import dcnsim

SCENARIOS = Path(dcnsim.__file__).parent / "scenarios"
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None and not os.environ.get("DCNSIM_REQUIRE_TSHARK"),
    reason="tshark (Debian package tshark) is not installed",
)

Frame = Tuple[int, int, int, bytes]  # interface, time (ns), length on the wire, bytes kept


def read_pcapng(data: bytes) -> Tuple[List[str], List[Frame]]:
    """Interface names and frames of a pcapng file (section header, interface description
    and enhanced packet blocks; draft-ietf-opsawg-pcapng sections 4.1-4.3)."""
    assert data[:4] == b"\x0a\x0d\x0d\x0a", "not a pcapng section header"
    bo = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    names: List[str] = []
    frames: List[Frame] = []
    off = 0
    while off < len(data):
        btype, blen = struct.unpack_from(bo + "II", data, off)
        body = data[off + 8 : off + blen - 4]
        if btype == 1:
            o, name, tsresol = 8, "", None
            while o + 4 <= len(body):
                code, ln = struct.unpack_from(bo + "HH", body, o)
                if code == 0:
                    break
                if code == 2:
                    name = body[o + 4 : o + 4 + ln].decode()
                if code == 9:
                    tsresol = body[o + 4]
                o += 4 + ((ln + 3) & ~3)
            assert tsresol == 9, "timestamps in ns"
            names.append(name)
        elif btype == 6:
            iface, hi, lo, cap, orig = struct.unpack_from(bo + "IIIII", body, 0)
            frames.append((iface, (hi << 32) | lo, orig, body[20 : 20 + cap]))
        off += blen
    return names, frames


def with_capture(name: str, capture: str, max_time: str) -> str:
    """A shipped scenario's text, shortened to `max_time`, with `[metrics.capture]`."""
    text = (SCENARIOS / f"{name}.toml").read_text()
    text = re.sub(r'(?m)^max_time = ".*"', f'max_time = "{max_time}"', text, count=1)
    cap = f"\n[metrics.capture]\n{capture}\n\n"
    i = text.find("[[variant]]")
    return text[:i] + cap + text[i:] if i >= 0 else text + cap


def tshark(path: Path, filt: str, *fields: str) -> List[List[str]]:
    cmd = [TSHARK or "tshark", "-X", f"lua_script:{dcnsim.WIRESHARK_PLUGIN}", "-r", str(path), "-Y", filt, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line]


def ethertype(b: bytes) -> Tuple[int, int]:
    """(EtherType after any 802.1Q tag, offset of the payload)."""
    t = int.from_bytes(b[12:14], "big")
    return (int.from_bytes(b[16:18], "big"), 18) if t == 0x8100 else (t, 14)


# A 6:1 RoCEv2 incast in a two-ToR fabric with PFC, ECN (RED ramp) and DCQCN, every frame
# of every switch port captured (cut to the default snaplen).
ROCE = """
[scenario]
name = "capture"
max_time = "3ms"
[topology]
kind = "clos2"
tors = 2
servers_per_tor = 4
spines = 1
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "100Gbps", delay = "1us" }
[switch]
buffer = { model = "static", queue = "300KB" }
aqm = { kind = "ramp", kmin = "5KB", kmax = "200KB", pmax = 0.01 }
pfc = { xoff = "60KB", xon = "50KB" }
[transport]
kind = "dcqcn"
[[workload]]
kind = "incast"
fan_in = 6
size = "400KB"
period = "oneshot"
[metrics.capture]
ports = ["tor0", "tor1", "spine0"]
frames = "all"
"""


@pytest.fixture(scope="module")
def roce(tmp_path_factory):
    r = dcnsim.run(ROCE)
    assert r.summary["end_reason"] == "completed"
    path = tmp_path_factory.mktemp("cap") / "capture.pcapng"
    path.write_bytes(r.capture)
    names, frames = read_pcapng(r.capture)
    return r, path, names, frames


def _per_port(r) -> Dict[str, Dict[str, int]]:
    agg = r.ports.groupby(["node_name", "port"])[["tx_packets", "pfc_tx_frames", "ecn_marks"]].sum()
    return {f"{n}:{p}": row.to_dict() for (n, p), row in agg.iterrows()}


def test_every_frame_each_port_sent_is_in_the_file(roce):
    r, _, names, frames = roce
    ports = _per_port(r)
    assert sorted(names) == sorted(k for k in ports if k.split(":")[0] in ("tor0", "tor1", "spine0"))
    data, pfc = collections.Counter(), collections.Counter()
    for i, _, _, b in frames:
        (pfc if ethertype(b)[0] == 0x8808 else data)[names[i]] += 1
    for n in names:
        assert data[n] == ports[n]["tx_packets"], n
        assert pfc[n] == ports[n]["pfc_tx_frames"], n
    assert sum(pfc.values()) > 0
    assert r.summary["capture_frames"] == len(frames)
    times = [t for _, t, _, _ in frames]
    assert times == sorted(times) and times[-1] <= 3_000_000


def test_pfc_frames_are_8021qbb_with_the_runs_quanta(roce):
    _, _, _, frames = roce
    pauses = [b for _, _, _, b in frames if ethertype(b)[0] == 0x8808]
    seen = set()
    for b in pauses:
        assert len(b) == 60 and b[:6] == bytes.fromhex("0180c2000001")
        opcode, enable = struct.unpack_from(">HH", b, 14)
        quanta = struct.unpack_from(">8H", b, 18)
        assert opcode == 0x0101 and enable == 1, "PFC for class 0, the only lossless one"
        assert quanta[1:] == (0,) * 7
        seen.add(quanta[0])
    assert seen == {65535, 0}, "XOFF carries switch.pfc.quanta (default 65535), XON 0"


def test_ecn_field_is_the_marking_the_run_counted(roce):
    r, _, names, frames = roce
    ports = _per_port(r)
    codepoints = collections.Counter()
    ce = collections.Counter()
    for i, _, _, b in frames:
        et, o = ethertype(b)
        if et != 0x0800:
            continue
        ecn, is_data = b[o + 1] & 3, b[o + 9] == 17 and b[o + 28] in (0x06, 0x07, 0x08, 0x0A)
        codepoints[(is_data, ecn)] += 1
        ce[names[i]] += ecn == 3
    # DCQCN data is ECT(0) until marked; acknowledgements and CNPs are not ECN-capable
    assert set(codepoints) == {(True, 2), (True, 3), (False, 0)}
    # tor1 -> spine0 is the first queue the tor1 senders' data meets: CE there is its marks
    assert ce["tor1:0"] == ports["tor1:0"]["ecn_marks"] > 0
    # all data reaches h3 through tor0:4; a packet is marked at most once per queue
    assert 0 < ce["tor0:4"] <= sum(p["ecn_marks"] for p in ports.values())


def test_cnps_answer_marked_flows(roce):
    r, _, _, frames = roce
    marked, cnps = set(), []
    for _, _, _, b in frames:
        et, o = ethertype(b)
        if et != 0x0800 or b[o + 9] != 17 or 4791 not in (int.from_bytes(b[o + 20 : o + 22], "big"), int.from_bytes(b[o + 22 : o + 24], "big")):
            continue
        opcode, qp = b[o + 28], int.from_bytes(b[o + 33 : o + 36], "big")
        if opcode == 0x81:
            cnps.append((qp, b[o + 16 : o + 20]))
        elif b[o + 1] & 3 == 3:
            marked.add(qp)
    assert cnps and all(qp in marked for qp, _ in cnps)
    # RC queue pairs start at 0x100: QPs 0 and 1 are the management QPs, whose payloads
    # Wireshark reads as MADs
    assert min(qp for qp, _ in cnps) >= 0x100
    flows = r.flows.set_index("flow_id")
    for qp, dst in cnps:
        assert dst == bytes([10, 0, 0, int(flows.loc[qp - 0x100, "src"]) + 1]), "a CNP goes to the flow's source"


@needs_tshark
def test_tshark_dissects_pfc_quanta_and_ecn(roce):
    _, path, _, frames = roce
    rows = tshark(path, "macc", "macc.opcode", "macc.cbfc.enbv", "macc.cbfc.pause_time.c0")
    ours = [struct.unpack_from(">HHH", b, 14) for _, _, _, b in frames if ethertype(b)[0] == 0x8808]
    assert [(int(a, 16), int(e, 16), int(q)) for a, e, q in rows] == ours
    ecn = collections.Counter(int(e) for (e,) in tshark(path, "ip", "ip.dsfield.ecn"))
    want = collections.Counter(b[ethertype(b)[1] + 1] & 3 for _, _, _, b in frames if ethertype(b)[0] == 0x0800)
    assert ecn == want
    assert len(tshark(path, "infiniband.bth.opcode == 129", "frame.number")) > 0


@needs_tshark
def test_default_snaplen_roce_frames_dissect_cleanly(roce):
    """Cut by the default snaplen, RoCEv2 data frames still dissect (with the plugin): no
    frame reads "[Malformed Packet]", every RDMA WRITE's BTH is Wireshark's, and the cut
    ones say how much of the payload was kept."""
    _, path, _, frames = roce
    infos = [i for (i,) in tshark(path, "frame", "_ws.col.Info")]
    assert len(infos) == len(frames) and not [i for i in infos if "Malformed" in i]
    writes = tshark(path, "infiniband.bth.opcode >= 6 && infiniband.bth.opcode <= 10", "infiniband.bth.destqp", "roce_cut.captured", "roce_cut.length")
    cut = [(int(c), int(n)) for _, c, n in writes if c]
    assert writes and all(int(q, 16) >= 0x100 for q, _, _ in writes)
    assert cut and all(c < n for c, n in cut)
    # the frames the snaplen cut are all RDMA WRITEs, each marked
    assert len(cut) == sum(1 for _, _, orig, b in frames if orig > len(b))


@needs_tshark
def test_whole_roce_frames_dissect_cleanly(tmp_path):
    """Kept whole, every RoCEv2 frame dissects without a malformed one, the data frames as
    RC RDMA WRITEs of the flow's queue pair (0x100 up: QPs 0 and 1 would read as MADs)."""
    r = dcnsim.run(ROCE.replace('frames = "all"', 'frames = "all"\nsnaplen = "0B"'))
    path = tmp_path / "capture.pcapng"
    path.write_bytes(r.capture)
    assert tshark(path, "_ws.malformed", "frame.number") == []
    assert not [i for (i,) in tshark(path, "frame", "_ws.col.Info") if "Malformed" in i]
    writes = tshark(path, "infiniband.bth.opcode >= 6 && infiniband.bth.opcode <= 10", "infiniband.bth.destqp")
    assert writes and all(int(q, 16) >= 0x100 for (q,) in writes)
    assert not tshark(path, "infiniband.mad", "frame.number")


@pytest.fixture(scope="module")
def qcn(tmp_path_factory):
    text = with_capture("seed001_qcn_small", 'ports = ["left"]', "12ms")
    r = dcnsim.run(text, variant="UDP, QCN")
    path = tmp_path_factory.mktemp("qcn") / "capture.pcapng"
    path.write_bytes(r.capture)
    return r, path, read_pcapng(r.capture)[1]


def _cnm(b: bytes) -> Dict[str, object]:
    et, o = ethertype(b)
    assert et == 0x22E7 and len(b) == 106 and b[14] >> 5 == 6, "CNM, priority 6, 110 B with FCS"
    v, = struct.unpack_from(">H", b, o)
    q_off, q_delta = struct.unpack_from(">hh", b, o + 10)
    return {
        "qntz": v & 0x3F,
        "version": v >> 12,
        "cp_mac": b[o + 2 : o + 8],
        "q_off": q_off * 64,
        "q_delta": q_delta * 64,
        "da": b[0:6],
        "encap_src": b[o + 24 + 12 : o + 24 + 16],
    }


def test_cnms_carry_the_congestion_points_feedback(qcn):
    r, _, frames = qcn
    cnms = [_cnm(b) for _, _, _, b in frames]
    # CNMs leave the congestion point ahead of its data: the file has every one it sent
    assert len(cnms) == r.summary["qcn_cnms"] > 0
    fb_max = (1 + 2 * 2) * 26_000
    for c in cnms:
        assert c["version"] == 0 and 1 <= c["qntz"] <= 63
        # QntzFb is |Fb| of Fb = -(Q_off + w Q_delta) in 6 bits: the fields, in 64-octet
        # units, give it back to within that rounding
        fb = -(c["q_off"] + 2 * c["q_delta"])
        assert abs(min(63, int(-fb * 63 / fb_max)) - c["qntz"]) <= 1 if fb < 0 else False, c
        # to the reaction point, the sampled frame's source
        assert c["da"] == b"\x02\x00" + c["encap_src"]
        assert c["cp_mac"] == bytes.fromhex("02000a800001"), "the left switch is switch 0"


@needs_tshark
def test_tshark_dissects_cnm_fields(qcn):
    _, path, frames = qcn
    rows = tshark(path, "cnm", "cnm.qntzfb", "cnm.qoffset", "cnm.qdelta", "cnm.encap.ip_src", "vlan.priority")
    ours = [_cnm(b) for _, _, _, b in frames]
    assert [(int(q), int(o) * 64, int(d) * 64, s) for q, o, d, s, _ in rows] == [
        (c["qntz"], c["q_off"], c["q_delta"], ".".join(map(str, c["encap_src"]))) for c in ours
    ]
    assert {p for *_, p in rows} == {"6"}


def test_cims_are_the_cips_the_run_sent(tmp_path):
    switches = ", ".join(f'"tor{i}", "spine{i}"' for i in range(8))
    r = dcnsim.run(with_capture("seed003_ci_2queue_small", f"ports = [{switches}]", "5ms"), variant="CI")
    _, frames = read_pcapng(r.capture)
    cims = [b for _, _, _, b in frames if ethertype(b)[0] == 0x89A2]
    assert len(cims) == r.summary["cips_sent"] > 0
    for b in cims:
        # 94 B with FCS at the default 48 octets encapsulated; to the upstream neighbour
        assert len(b) == 90 and b[14] >> 5 == 6
        assert b[0:2] == b"\x02\x00" and b[6:8] == b"\x02\x00"
        assert b[18 + 24] >> 4 == 4, "the offending frame's IPv4 header"
    if TSHARK:
        path = tmp_path / "c.pcapng"
        path.write_bytes(r.capture)
        assert len(tshark(path, "cim", "cim.encap.ip_dst")) == len(cims)


def test_sfc_messages_name_the_paused_flow(tmp_path):
    text = with_capture("seed004_sfc_benefits_small", 'ports = ["tor0_0"]\nmax_frames = 3000', "1ms")
    with pytest.warns(dcnsim.DcnsimWarning, match=r"metrics.capture stopped at max_frames = 3000: \d+ later frames"):
        r = dcnsim.run(text, variant="SFC native+DCQCN")
    assert r.summary["capture_frames"] == 3000
    _, frames = read_pcapng(r.capture)
    msgs = []
    for _, _, _, b in frames:
        et, o = ethertype(b)
        if et == 0x0800 and b[o + 9] == 17 and int.from_bytes(b[o + 22 : o + 24], "big") == 0xFFC0:
            msgs.append(b[o + 28 : o + 42])
            assert b[o] == 0x45 and b[o + 1] >> 2 == 48 and b[o + 12] == 10 and b[o + 13] >= 128, "from a switch, CS6"
            assert len(b) == 60
    assert msgs
    for m in msgs:
        version, cls, pause_ns = m[0], m[1], int.from_bytes(m[2:6], "big")
        assert version == 1 and cls == 0
        # (depth - 50 KB target) at the port's 100 or 400 Gbit/s, or what is left of it
        # when the ToR's destination cache answers
        assert 0 < pause_ns < 1_000_000
        assert m[6] == 10 and m[7] < 128 and int.from_bytes(m[12:14], "big") == 4791
    if TSHARK:
        path = tmp_path / "s.pcapng"
        path.write_bytes(r.capture)
        rows = tshark(path, "sfc", "sfc.pause_ns")
        assert [int(p) for (p,) in rows] == [int.from_bytes(m[2:6], "big") for m in msgs]


def test_drc_frames_carry_direction_and_severity(tmp_path):
    r = dcnsim.run(with_capture("seed001_mixed_small", 'ports = ["A", "B", "C"]', "5ms"), variant="DRC_RED_ECN 64KB")
    _, frames = read_pcapng(r.capture)
    drc = [b for _, _, _, b in frames if ethertype(b)[0] == 0x8808 and b[14:16] == b"\xff\x01"]
    assert drc and len(drc) == len(frames), "only DRC frames are control frames here"
    for b in drc:
        mask, first, dirs, level = b[16], int.from_bytes(b[17:19], "big"), int.from_bytes(b[19:21], "big"), b[21]
        # switch.drc.classes unset: every class is rate-controlled; C, the largest, has 4
        # ports; an output-queued switch's frame names the one egress queue that changed
        assert mask == 0xFF and first == 0 and dirs in (1, 2, 4, 8) and level <= 3
    if TSHARK:
        path = tmp_path / "d.pcapng"
        path.write_bytes(r.capture)
        rows = tshark(path, "drc", "drc.direction", "drc.directions", "drc.severity")
        assert [(int(d), int(m, 16), int(s)) for d, m, s in rows] == [(int.from_bytes(b[17:19], "big"), int.from_bytes(b[19:21], "big"), b[21]) for b in drc]


def test_drc_frame_names_the_directions_that_change_together(tmp_path):
    """On an input-buffered switch (per-direction feedback) one arrival moves every
    direction's share of the input's room: a frame names all the directions that changed
    to one severity, as a mask from its first direction, and tshark reads the same."""
    r = dcnsim.run(with_capture("seed001_backplane_voq_small", 'ports = ["switch"]', "2ms"), variant="DRC 16KB")
    _, frames = read_pcapng(r.capture)
    drc = [b for _, _, _, b in frames if ethertype(b)[0] == 0x8808 and b[14:16] == b"\xff\x01"]
    masks = [int.from_bytes(b[19:21], "big") for b in drc]
    assert drc and all(m and int.from_bytes(b[17:19], "big") == 0 and b[21] <= 3 for b, m in zip(drc, masks))
    assert sum(bin(m).count("1") for m in masks) > len(drc), "some frame names several directions"
    # counted as the switch queues them, captured as they leave: a few wait at the end
    assert 0.999 * r.summary["drc_frames"] <= len(drc) <= r.summary["drc_frames"]
    if TSHARK:
        path = tmp_path / "v.pcapng"
        path.write_bytes(r.capture)
        rows = tshark(path, "drc", "drc.directions", "drc.severity")
        assert [(int(m, 16), int(s)) for m, s in rows] == [(m, b[21]) for b, m in zip(drc, masks)]


def test_tcp_ecn_echo_and_window(tmp_path):
    """DCTCP in the dumbbell: CE on the bottleneck's data, ECE on the ACKs that echo it."""
    # the second flow starts at 5 ms: from then on the bottleneck queue builds past K
    r = dcnsim.run(with_capture("dumbbell_dctcp", 'ports = ["left", "right"]\nframes = "all"\nfrom = "5ms"\nto = "7ms"', "20ms"))
    _, frames = read_pcapng(r.capture)
    ce = ece = acks = 0
    for _, t, orig, b in frames:
        assert 5_000_000 <= t < 7_000_000
        et, o = ethertype(b)
        assert et == 0x0800 and b[o + 9] == 6
        flags = b[o + 33]
        if orig > 100:
            # DCTCP sends ECT(1) (transport.ect's default for it), CE once marked
            assert flags == 0x10 and b[o + 1] & 3 in (1, 3) and orig == 18 + 40 + 1460
            ce += b[o + 1] & 3 == 3
        else:
            acks += 1
            ece += bool(flags & 0x40)
    assert ce > 0 and ece > 0 and acks > 0
    assert len(frames) < sum(r.ports["tx_packets"])


@pytest.mark.parametrize(
    "capture,message",
    [
        ('ports = ["lft"]', r'metrics.capture.ports\[0\]: no node named "lft" \(did you mean "left"\?\)'),
        ('ports = ["left:9"]', r'metrics.capture.ports\[0\]: invalid value "left:9", expected a port number 0\.\.\d+ of left'),
        ('ports = ["h0->h1"]', r'metrics.capture.ports\[0\]: invalid value "h0->h1": h0 has no link to h1'),
        ("ports = []", r"metrics.capture.ports: missing or empty"),
        ('ports = ["left"]\nfrom = "2ms"\nto = "1ms"', r"metrics.capture.to: invalid value 1.000ms, expected a time after metrics.capture.from \(2.000ms\)"),
        ('ports = ["left"]\nframes = "data"', r'unknown variant|invalid value "data"'),
        ('ports = ["left"]\nmax_frames = 0', r"metrics.capture.max_frames: invalid value 0"),
    ],
)
def test_bad_capture_is_refused_with_its_key(capture, message):
    with pytest.raises(dcnsim.ScenarioError, match=message):
        dcnsim.validate(with_capture("dumbbell_dctcp", capture, "20ms"))
