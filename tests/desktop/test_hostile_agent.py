"""A hostile agent on a real desktop: every way out that the sandbox must close, tried from inside.

Each probe runs as agent code runs (through the env server, as the desktop's user) and
is shown to fail, with the host checked unchanged afterwards. The harness here runs as
whoever runs the tests (root under `make test` on a fresh machine, which is the case the
uid mapping matters for); `test_a_normal_users_desktop_holds_too` repeats the core probes
with the harness running as an unprivileged user.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
import requests

from desktop_env.controllers.python import ACTION_PREFIX, PythonController
from desktop_env.desktop_env import DesktopEnv
from desktop_env.errors import EnvServerGone, ResourceLimitExceeded, ServerRequestError
from desktop_env.providers.local import LocalProvider
from desktop_env.providers.local.boot.logs import log_tail
from desktop_env.providers.local.build.etc_view import ensure_etc_view
from desktop_env.providers.local.build.prepare import desktop_system
from desktop_env.providers.local.build.server_code import SHARED_MODULES
from desktop_env.providers.local.limits import DesktopLimits, cgroup_support
from osworld_harness.execution.episode import EpisodeConfig, run_episode

pytestmark = pytest.mark.desktop

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-osworld-probe-3f9c1e7a"
SYSTEM_PYTHON = "/usr/bin/python3"
HOME_CAP = 128 << 20
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the host-uid mapping matters for a harness running as root")


@pytest.fixture(scope="module")
def provider():
    os.environ["OSWORLD_PROBE_API_KEY"] = SECRET  # as if the harness had been started with an API key
    provider = LocalProvider(screen_size=(1024, 768),
                             limits=DesktopLimits(memory_bytes=1 << 30, pids=400, tmpfs_bytes=64 << 20,
                                                  disk_bytes=HOME_CAP))
    provider.start_emulator()
    yield provider
    provider.stop_emulator()
    os.environ.pop("OSWORLD_PROBE_API_KEY", None)


def agent(provider: LocalProvider, code: str, timeout: float = 60) -> dict:
    """Runs Python exactly as an agent's action does (pyautogui's interpreter, in the desktop)."""
    return PythonController(provider.get_ip_address()).execute_python_command(ACTION_PREFIX + code, timeout=timeout)


def shell(provider: LocalProvider, script: str) -> dict:
    return PythonController(provider.get_ip_address()).run_command(script, shell=True)


def host_uids(pid: int) -> list[int]:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Uid:"):
                return [int(v) for v in line.split()[1:]]
    return []


# -- host root -----------------------------------------------------------------------------------

@as_root
def test_no_process_of_the_desktop_is_host_root(provider):
    pids = provider.process_ids()
    assert len(pids) > 5
    for pid in pids:
        assert 0 not in host_uids(pid), f"pid {pid} runs as host root"


def test_agent_code_changes_no_host_setting(provider):
    before = {name: Path(f"/proc/sys/kernel/{name}").read_text() for name in ("printk_ratelimit_burst", "core_pattern")}
    out = agent(provider, textwrap.dedent("""
        for path, value in (("/proc/sys/kernel/printk_ratelimit_burst", "11"),
                            ("/proc/sys/kernel/core_pattern", "|/tmp/own-the-host %p")):
            try:
                with open(path, "w") as f:
                    f.write(value)
                print("WROTE", path)
            except OSError as e:
                print("refused", path, e.errno)
        """))
    assert "WROTE" not in out["output"] and out["output"].count("refused") == 2, out
    after = {name: Path(f"/proc/sys/kernel/{name}").read_text() for name in before}
    assert after == before


def test_no_file_made_inside_is_setuid_on_the_host(provider):
    result = shell(provider, "cp /bin/true ~/escalate; chmod u+s ~/escalate; chmod g+s ~/escalate; "
                             "python3 -c \"import os; "
                             "os.open('/home/user/made-setuid', os.O_CREAT | os.O_WRONLY, 0o6755)\"")
    assert result["error"].count("Operation not permitted") == 3, result
    home = Path(f"/proc/{provider._sandbox.child_pid}/root/home/user")  # the home lives in the sandbox's memory
    for name in ("escalate", "made-setuid"):
        path = home / name
        assert not path.exists() or os.lstat(path).st_mode & (stat.S_ISUID | stat.S_ISGID) == 0, name
        assert not any(name in files for _, _, files in os.walk(provider.env_dir))
    if os.geteuid() == 0:
        info = os.lstat(home / "escalate")
        assert info.st_uid != 0 and info.st_gid != 0
    # ...and only the harness (and the desktops' own group, to enter) can reach the folder it is in
    assert stat.S_IMODE(os.stat(provider.env_dir.parent).st_mode) & 0o007 == 0
    assert stat.S_IMODE(os.stat(provider.env_dir).st_mode) & 0o007 == 0


# -- secrets ---------------------------------------------------------------------------------------

def test_no_secret_of_the_harness_reaches_the_desktop(provider):
    every_environ = shell(provider, "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; env")
    assert every_environ["output"] and SECRET not in every_environ["output"]
    assert "OSWORLD_PROBE_API_KEY" not in every_environ["output"]
    try:
        first = PythonController(provider.get_ip_address()).get_file("/proc/1/environ")
    except ServerRequestError as e:  # with a root inside, bwrap's pid 1 is root's: closed to the user
        assert e.status == 403 and not provider.sudo_unavailable
    else:
        assert first is not None and SECRET.encode() not in first


# -- the answers -------------------------------------------------------------------------------

def test_no_checkout_task_file_cache_or_result_is_visible(provider, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "result.txt").write_text("1.0\n")
    named = [str(REPO), str(REPO / "evaluation_examples"), str(results), str(Path.home()), "/work", "/root", "/opt",
             "/srv", "/var/lib", "/mnt", "/media", "/var/cache/osworld", os.path.expanduser("~/.cache/osworld")]
    probe = agent(provider, "import os, json\nprint(json.dumps({p: os.path.exists(p) and (sorted(os.listdir(p)) "
                            f"if os.access(p, os.R_OK) else 'closed') for p in {named!r}}}))")
    # A desktop with a root of its own has its own /root (closed to the user; root finds it
    # empty: test_root_inside_cannot_reach_or_change_the_host) and dpkg's and apt's state.
    own = {"/root": "closed", "/var/lib": ["apt", "dpkg"]} if not provider.sudo_unavailable else {}
    assert json.loads(probe["output"]) == {p: own.get(p, False) for p in named}
    found = shell(provider, "find / -xdev \\( -name evaluation_examples -o -name solutions -o -name test_all.json "
                            "-o -name '*.git' -o -name results \\) -not -path '/proc/*' 2>/dev/null")
    assert found["output"].split() == []
    code = shell(provider, "cd /run/osworld-lib/src && find . -type f | sort")["output"].split()
    # the server's package and the shared modules, each with its byte code
    shipped = ("./desktop_env/server/", *(f"./desktop_env/{name}" for name in SHARED_MODULES),
               *(f"./desktop_env/__pycache__/{name.removesuffix('.py')}.cpython-" for name in SHARED_MODULES))
    assert code and all(path.startswith(shipped) for path in code), code
    assert any(path.startswith("./desktop_env/server/__pycache__/session.cpython-") for path in code), code


HOST_CONFIG = ("/etc/environment", "/etc/sudoers", "/etc/profile.d", "/etc/ssh")


def test_the_system_is_read_only_and_hidden_config_stays_hidden(provider):
    result = shell(provider, "touch /usr/x /etc/x /x /var/x 2>&1; ls /sys")
    # Closed to the user either way: read-only without a root inside, root's own with one (as on a VM).
    refusal = "Permission denied" if provider.sudo_unavailable == "" else "Read-only file system"
    assert result["output"].count(refusal) == 4, result
    assert result["output"].split()[-1] == "devices"
    # The host's configuration never shows: a desktop of the host's packages has none of these files, one of
    # the Ubuntu userland has its tree's own (its size and mode, and its bytes where the user may read them).
    system = desktop_system()
    listing = "; ".join(f"stat -c '%n %s %a' {path} 2>&1; sha256sum {path} 2>/dev/null" for path in HOST_CONFIG)
    inside = shell(provider, listing)["output"]
    for path in HOST_CONFIG:
        tree = None if system.is_host else system.host_path(path)
        if tree is None or not (tree.exists() or tree.is_symlink()):
            assert f"'{path}': No such file or directory" in inside, (path, inside)
            continue
        found = tree.lstat()
        assert f"{path} {found.st_size} {stat.S_IMODE(found.st_mode):o}" in inside, (path, inside)
        if stat.S_ISREG(found.st_mode) and found.st_mode & stat.S_IROTH:
            assert f"{hashlib.sha256(tree.read_bytes()).hexdigest()}  {path}" in inside, (path, inside)
    # The desktop's identity files are its own: no host account, no host password hash.
    host_accounts = {line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines()}
    inside = shell(provider, "cut -d: -f1 /etc/passwd; cat /etc/shadow 2>&1")["output"].split()
    assert set(inside) & host_accounts <= {"root", "nobody", "user"}, inside
    assert "$" not in " ".join(inside)


# -- root inside (sudo) is the desktop's root, never the host's -----------------------------------

ROOT_PROBE = r"""
import ctypes, errno, json, os, struct, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
out = {"uid": os.getuid()}
def call(name, result):
    out[name] = ctypes.get_errno() if result != 0 else 0
for path in ("/run/osworld-lib/src/desktop_env/planted", "/run/osworld-lib/venv/planted",
             "/var/cache/fontconfig/planted", "/sys/devices/system/cpu/planted"):
    try:
        open(path, "w").write("x")
        out["wrote " + path] = True
    except OSError as e:
        out["wrote " + path] = e.errno
MS_REMOUNT, MS_BIND = 0x20, 0x1000
for target in ("/run/osworld-lib/src", "/usr", "/etc", "/"):
    call("remount rw " + target, libc.mount(None, target.encode(), None, MS_REMOUNT | MS_BIND, None))
attr = ctypes.create_string_buffer(struct.pack("=QQQQ", 0, 1, 0, 0))  # clear MOUNT_ATTR_RDONLY
call("mount_setattr rw src", libc.syscall(442, -100, b"/run/osworld-lib/src", 0, attr, 32))
call("umount /usr", libc.umount2(b"/usr", 2))
call("mount tmpfs", libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None))
call("finit_module", libc.syscall(313, 0, b"", 0))
call("init_module", libc.syscall(175, None, 0, b""))
# A namespace of its own gives root every capability again, over nothing it did not mount itself.
for name, script in (("src", "mount -o remount,rw,bind /run/osworld-lib/src && touch /run/osworld-lib/src/planted"),
                     ("usr", "umount -l /usr; mount -o remount,rw,bind /usr && touch /usr/planted")):
    out["nested namespace remount " + name] = subprocess.run(["unshare", "-Urm", "sh", "-c", script]).returncode
subprocess.run(["cp", "/usr/bin/true", "/usr/bin/root-true"])
try:
    os.chmod("/usr/bin/root-true", 0o4755)
    out["setuid"] = 0
except OSError as e:
    out["setuid"] = e.errno
try:
    open("/proc/sys/kernel/printk_ratelimit_burst", "w").write("11")
    out["sysctl"] = 0
except OSError as e:
    out["sysctl"] = e.errno
harness = int(sys.argv[1])
try:
    out["harness visible"] = "pytest" in open(f"/proc/{harness}/cmdline").read()
except OSError:
    out["harness visible"] = False
environ = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        environ.append(open(f"/proc/{pid}/environ").read())
    except OSError:
        pass  # bwrap's pid 1 is closed even to root here
out["every environ"] = "\n".join(environ)
out["seen"] = {p: os.path.exists(p) for p in sys.argv[2:]}
out["root home"] = os.listdir("/root")
print(json.dumps(out))
"""


def _host_snapshot(provider) -> dict:
    # a file's bytes, or (mode, uid, size, mtime) of everything in the walked folders
    state: dict[str, bytes | tuple[int, int, int, int]] = {
        path: Path(path).read_bytes() for path in ("/etc/hosts", "/etc/passwd", "/etc/shadow")}
    # what the desktop's root sees of the host (the etc view is the copy its /etc starts from)
    parts = provider._desktop.parts
    for top in (parts.server_code, parts.venv, Path("/usr/bin"), Path("/usr/local"), ensure_etc_view(),
                Path("/var/lib/dpkg")):
        for folder, dirs, files in os.walk(top):
            for name in dirs + files:
                info = os.lstat(os.path.join(folder, name))
                state[os.path.join(folder, name)] = (info.st_mode, info.st_uid, info.st_size, info.st_mtime_ns)
    return state


def test_root_inside_cannot_reach_or_change_the_host(provider, tmp_path):
    if provider.sudo_unavailable:
        pytest.skip(f"no root inside: {provider.sudo_unavailable}")
    before = _host_snapshot(provider)
    results = tmp_path / "results"
    results.mkdir()
    named = [str(REPO), str(results), "/work", str(Path.home() / ".cache" / "osworld")]
    agent(provider, f"open('/home/user/root_probe.py', 'w').write({ROOT_PROBE!r})")
    probe = shell(provider, f"echo password | sudo -S /usr/bin/python3 /home/user/root_probe.py {os.getpid()} "
                            + " ".join(named))
    seen = json.loads(probe["output"].strip().splitlines()[-1])
    assert seen["uid"] == 0
    assert all(value in (errno.EROFS, errno.EACCES) for key, value in seen.items() if key.startswith("wrote ")), seen
    assert all(seen[key] == errno.EPERM for key in seen if key.startswith("remount rw ")), seen
    assert seen["mount_setattr rw src"] == errno.EPERM and seen["umount /usr"] == errno.EPERM
    assert seen["mount tmpfs"] == errno.EPERM
    # EPERM; ENOSYS where the kernel has no module support at all
    assert seen["finit_module"] in (errno.EPERM, errno.ENOSYS) and seen["init_module"] in (errno.EPERM, errno.ENOSYS)
    assert seen["nested namespace remount src"] != 0 and seen["nested namespace remount usr"] != 0
    assert seen["setuid"] == errno.EPERM
    assert seen["sysctl"] in (errno.EACCES, errno.EPERM, errno.EROFS)
    assert seen["harness visible"] is False
    assert "HOME=" in seen["every environ"] and SECRET not in seen["every environ"]
    assert seen["seen"] == {path: False for path in named} and seen["root home"] == []
    assert _host_snapshot(provider) == before
    for pid in provider.process_ids():
        assert 0 not in host_uids(pid), f"pid {pid} runs as host root"


# -- the harness never follows what the desktop plants ------------------------------------------

def test_a_planted_socket_or_log_symlink_is_never_followed(provider):
    planted = shell(provider, "ln -sf /etc/shadow /run/osworld/logs/Xvfb.log; "
                              "ln -s /etc/shadow /run/osworld/logs/a.log; "
                              "rm -f /run/osworld/server.sock; "
                              "ln -s /run/osworld/bus /run/osworld/server.sock; echo ok")
    assert planted["output"].strip() == "ok"
    assert "root:" not in log_tail(provider._sandbox)
    # the harness still talks to its own server: the socket it uses lives where the desktop cannot write
    assert PythonController(provider.get_ip_address()).get_vm_screen_size() == {"width": 1024, "height": 768}


# -- limits ------------------------------------------------------------------------------------

def test_memory_processes_and_tmpfs_are_capped(provider):
    if not cgroup_support().in_force:
        pytest.skip(f"cgroup limits: {cgroup_support().summary()}")
    env = DesktopEnv(provider=provider, require_a11y_tree=False)
    env.check_resource_limits()  # nothing hit yet
    fill = shell(provider, "dd if=/dev/zero of=/tmp/fill bs=1M count=2048 2>&1; rm /tmp/fill")
    assert "No space left" in fill["output"] and f"{64 << 20} bytes" in fill["output"]
    forks = agent(provider, textwrap.dedent("""
        import subprocess
        children = []
        try:
            for _ in range(2000):
                children.append(subprocess.Popen(["sleep", "30"]))
        except OSError as e:
            print("refused after", len(children), e.errno)
        for child in children:
            child.kill()
            child.wait()
        """))
    assert "refused after" in forks["output"], forks
    assert int(forks["output"].split()[2]) < 400
    hog = agent(provider, "import subprocess\nr = subprocess.run(['python3', '-c', 'x = bytearray(3 << 30)'])\n"
                          "print('exit', r.returncode)")
    assert hog["output"].strip() in ("exit -9", "exit 1"), hog  # OOM-killed (or MemoryError at the cap)
    assert PythonController(provider.get_ip_address()).get_vm_screen_size()  # the desktop itself lives on
    sentence = provider.resource_limit_hit()
    assert "process limit" in sentence
    with pytest.raises(ResourceLimitExceeded, match="process limit"):
        env.check_resource_limits()
    provider.revert_to_snapshot()  # a reset starts the count again
    assert provider.resource_limit_hit() == ""


def host_bytes(folder: Path) -> int:
    """Bytes the files under `folder` take on the host's disk."""
    total = 0
    for parent, dirs, files in os.walk(folder):
        for name in dirs + files:
            total += os.lstat(os.path.join(parent, name)).st_blocks * 512
    return total


def test_the_home_folder_has_a_size_cap_and_filling_it_is_a_limit_event(provider):
    env = DesktopEnv(provider=provider, require_a11y_tree=False)
    on_host = host_bytes(provider.env_dir)
    size, fstype = shell(provider, "df -B1 --output=size,fstype ~ | tail -1")["output"].split()
    assert (int(size), fstype) == (HOME_CAP, "tmpfs")
    fill = shell(provider, "dd if=/dev/zero of=$HOME/Documents/fill bs=1M count=512 2>&1")
    assert "No space left on device" in fill["output"], fill
    assert host_bytes(provider.env_dir) - on_host < 1 << 20
    assert "home folder" in provider.resource_limit_hit()
    with pytest.raises(ResourceLimitExceeded, match="home folder"):
        env.check_resource_limits()
    provider.revert_to_snapshot()  # a fresh home from the template, and the count starts again
    assert provider.resource_limit_hit() == ""
    assert shell(provider, "ls -A ~/Documents; test -f ~/.bashrc && echo template")["output"].split() == ["template"]


WRITABLE_PLACES = r"""
import json, os
top = {}
for line in open("/proc/self/mountinfo"):
    fields, tail = line.split(" - ")
    mount_point = fields.split()[4].replace("\\040", " ")
    top[mount_point] = (tail.split()[0], fields.split()[5])  # the last mount at a point is the one seen
places = {}
for mount_point, (fstype, options) in top.items():
    if os.path.isdir(mount_point) and "ro" not in options.split(",") and os.access(mount_point, os.W_OK):
        stat = os.statvfs(mount_point)
        places[mount_point] = [fstype, stat.f_blocks * stat.f_frsize]
# What every process inherited as its output: once a file on the host, which any process of
# the same user could reopen through /proc and grow without bound.
outputs = {tuple(os.fstat(fd)[1:3]) for fd in (1, 2)}  # this probe's own answer is left alone
for pid in filter(str.isdigit, os.listdir("/proc")):
    for fd in ("1", "2"):
        try:
            target = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        except OSError:
            continue
        key = tuple(os.fstat(target)[1:3])
        if key not in outputs:
            outputs.add(key)
            try:
                for _ in range(16):
                    os.write(target, b"x" * (1 << 20))
            except OSError:
                pass
        os.close(target)
print(json.dumps(places))
"""


def test_nothing_the_desktop_writes_reaches_the_hosts_disk_uncapped(provider):
    on_host = host_bytes(provider.env_dir)
    caps = {"tmpfs": max(HOME_CAP, 64 << 20)}
    agent(provider, f"open('/tmp/places.py', 'w').write({WRITABLE_PLACES!r})")
    runs = {"user": shell(provider, "python3 /tmp/places.py")}
    if not provider.sudo_unavailable:
        runs["root inside"] = shell(provider, "echo password | sudo -S python3 /tmp/places.py")
    for who, run in runs.items():
        places = json.loads(run["output"].strip().splitlines()[-1])
        assert "/home/user" in places and "/tmp" in places, (who, places)
        for mount_point, (fstype, size) in places.items():
            # overlays: root's changes to the system trees, whose upper layers are in a capped tmpfs
            assert fstype in ("tmpfs", "overlay", "devpts"), (who, mount_point, fstype)
            assert fstype != "tmpfs" or size <= caps["tmpfs"], (who, mount_point, size)
    assert host_bytes(provider.env_dir) - on_host < 1 << 20


# -- its own env server ------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_an_env_server_killed_or_stopped_by_agent_code_is_given_up_in_seconds(provider, how):
    """The harness holds the server's socket, so a dead or stopped server's requests were accepted and never
    answered: 150 s for the action, 150 s more for each end-of-task call."""
    env = DesktopEnv(provider=provider, require_a11y_tree=False)
    try:
        started = time.monotonic()
        with pytest.raises(EnvServerGone, match="died|exited|stopped"):
            env.step(f"import os, signal\nos.kill(os.getppid(), signal.{how})", 0)
        assert time.monotonic() - started < 10
        started = time.monotonic()
        with pytest.raises(EnvServerGone, match="was not sent"):
            env.controller.end_recording(os.devnull)
        assert time.monotonic() - started < 1
        assert env.reset()["screenshot"]  # a new desktop, and a client of its server
    finally:
        if not provider.is_running() or provider.server_gone():
            provider.revert_to_snapshot()


class OneAction:
    def __init__(self, action: str):
        self.actions = [action, "DONE"]

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return "", [self.actions.pop(0)]


def test_an_agent_that_kills_its_x_server_scores_zero_with_the_reason(provider, tmp_path):
    env = DesktopEnv(provider=provider, require_a11y_tree=False)
    task = {"id": "x", "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": {"expected": "a"}},
                                     "expected": {"type": "rule", "rules": {"expected": "a"}}}}
    try:
        # the action returns once Xvfb is gone, so that the screenshot after it cannot come first; gone
        # is dead, not reaped (pgrep would match the zombie the whole 120 s the action is allowed)
        kill_x = ("import subprocess, time\nsubprocess.run(['pkill', '-9', 'Xvfb'])\n"
                  "while subprocess.run(['pgrep', '-x', '--runstates', 'D,R,S,T,t', 'Xvfb']).returncode == 0:\n"
                  "    time.sleep(0.05)")
        outcome = run_episode(OneAction(kill_x), env, task,
                              "do it", tmp_path, EpisodeConfig(record=False))
    finally:
        provider.revert_to_snapshot()
    assert (outcome.status, outcome.score, outcome.agent_fault.kind) == ("ok", 0.0, "unresponsive")
    assert outcome.agent_fault.message.startswith("the desktop's Xvfb") and "died; then: ServerRequestError" in \
        outcome.agent_fault.message
    assert (tmp_path / "result.txt").read_text() == "0.0\n"


# -- the served port ---------------------------------------------------------------------------

def become(uid: int):
    """A preexec_fn that turns the child into `uid` (and its group of the same number)."""
    def drop():
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    return drop


def _as_user(uid: int, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True, timeout=60,
                          preexec_fn=become(uid), cwd="/")


@as_root
def test_the_tcp_port_serves_only_this_user_and_refuses_cross_site_requests(provider):
    host, port = provider.expose_server()
    url = f"http://{host}:{port}"
    assert requests.get(url + "/platform", timeout=30).text == "Linux"
    other_user = _as_user(65534, textwrap.dedent(f"""
        import socket
        s = socket.create_connection(("{host}", {port}), timeout=10)
        s.sendall(b"GET /platform HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n")
        print(repr(s.recv(100)))
        """))
    assert other_user.stdout.strip() in ("b''", "") or "ConnectionResetError" in other_user.stderr, other_user
    marker = "/home/user/cross-site-was-here"
    command = json.dumps({"command": ["touch", marker], "shell": False})
    for headers in ({"Content-Type": "text/plain"},
                    {"Content-Type": "application/json", "Origin": "http://evil.example"},
                    {"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"}):
        response = requests.post(url + "/execute", data=command, headers=headers, timeout=30)
        assert 400 <= response.status_code < 500, (headers, response.status_code, response.text)
    assert requests.post(url + "/execute", json={"command": ["true"]}, headers={"Host": "evil.example"},
                         timeout=30).status_code == 403
    assert PythonController(provider.get_ip_address()).get_file(marker) is None


# -- what agent code may do: pyautogui from any python ------------------------------------------

def test_python_inside_imports_pyautogui(provider):
    for python in ("python", "python3"):
        result = shell(provider, f"{python} -c 'import pyautogui; print(pyautogui.size())'")
        assert result["returncode"] == 0 and "Size(width=1024, height=768)" in result["output"], result


# -- the same walls for a harness run by a normal user -----------------------------------------

NORMAL_USER_PROBE = """
import json, os, sys
from desktop_env.providers.local import LocalProvider
from desktop_env.providers.local.build.etc_view import ensure_etc_view
from desktop_env.providers.local.build.prepare import desktop_system
from desktop_env.controllers.python import PythonController
from desktop_env.providers.local.limits import DesktopLimits
provider = LocalProvider(screen_size=(800, 600), limits=DesktopLimits(disk_bytes=64 << 20))
provider.start_emulator()
try:
    c = PythonController(provider.get_ip_address())
    run = lambda s: c.run_command(s, shell=True)
    print(json.dumps({
        "uid_inside": run("id -u")["output"].strip(),
        "host_uids": sorted({int(l.split()[1]) for p in provider.process_ids()
                             for l in open(f"/proc/{p}/status") if l.startswith("Uid:")}),
        "sysctl": run("echo 11 > /proc/sys/kernel/printk_ratelimit_burst 2>&1; echo rc=$?")["output"],
        "environ": run("cat /proc/1/environ")["output"],
        "checkout": run("ls -d %(repo)s /root /work 2>&1")["output"],
        "pyautogui": run("python -c 'import pyautogui' 2>/dev/null; echo rc=$?")["output"].strip(),
        "sudo": run("echo password | sudo -S true; echo rc=$?"),
        "home": run("df -B1 --output=size,fstype ~ | tail -1; "
                    "dd if=/dev/zero of=$HOME/fill bs=1M count=100 2>&1")["output"],
        "limit": provider.resource_limit_hit(),
    }))
finally:
    provider.stop_emulator()
"""


@pytest.fixture
def normal_user_folder():
    """A folder of the user `nobody` (pytest's tmp_path sits in root's private folder)."""
    folder = Path(tempfile.mkdtemp(prefix="osworld-normal-user-"))
    os.chown(folder, 65534, 65534)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@as_root
def test_a_normal_users_desktop_holds_too(normal_user_folder):
    uid = 65534
    readable = all(os.stat(p).st_mode & 0o005 == 0o005 for p in [*REPO.parents, REPO] if p != Path("/"))
    if not readable:
        pytest.skip(f"the checkout at {REPO} is not readable by other users, so no normal user can run it")
    folders = {}
    for name in ("cache", "runtime", "home"):
        folders[name] = normal_user_folder / name
        folders[name].mkdir()
        os.chown(folders[name], uid, uid)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folders["home"]), "OSWORLD_CACHE": str(folders["cache"]),
           "OSWORLD_RUNTIME_DIR": str(folders["runtime"] / "rt"), "OSWORLD_SANDBOX_SHARE": "/var/cache/osworld",
           "OSWORLD_PROBE_API_KEY": SECRET, "PYTHONPATH": str(REPO)}

    # Debian's Python: the harness's venv may live where other users cannot enter (/root/.pyenv),
    # and the desktop side of the harness needs nothing beyond the standard library.
    done = subprocess.run([SYSTEM_PYTHON, "-c", NORMAL_USER_PROBE % {"repo": REPO}], capture_output=True, text=True,
                          env=env, preexec_fn=become(uid), timeout=180, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["uid_inside"] == "1000" and seen["host_uids"] == [uid]
    assert "rc=0" not in seen["sysctl"]
    assert SECRET not in seen["environ"]
    assert seen["checkout"].count("No such file or directory") == 3
    assert seen["pyautogui"].splitlines()[-1] == "rc=0"
    # no root inside without a root harness: sudo says why in one line and fails, never "not found"
    assert seen["sudo"]["output"] == "rc=1\n"
    assert seen["sudo"]["error"].startswith("sudo: not available in this desktop: the harness does not run as root")
    assert seen["sudo"]["error"].count("\n") == 1
    # the home folder's cap holds without root or cgroups too, and filling it is noticed
    assert seen["home"].split()[:2] == [str(64 << 20), "tmpfs"] and "No space left on device" in seen["home"]
    assert "home folder" in seen["limit"]
