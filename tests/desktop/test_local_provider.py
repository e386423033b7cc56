"""The local provider: sandboxed desktops that reset, isolate, forward ports and clean up."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.desktop_env import DesktopEnv
from desktop_env.errors import DesktopNotReady, DesktopPartDied, ProviderError
from desktop_env.providers.local import LocalDesktopConfig, LocalProvider
from desktop_env.providers.local.boot.desktop_storage import copy_home_caches
from desktop_env.providers.local.boot.env_dir import prune_stale_env_dirs, runtime_root
from desktop_env.providers.local.boot.orphans import is_namespace_init, sandboxes_of
from desktop_env.providers.local.build.prepare import desktop_parts
from desktop_env.providers.local.build.seeded_home import CACHES
from desktop_env.server.session import DESKTOP_COMPONENTS
from tests.processes import ended

pytestmark = pytest.mark.desktop


@pytest.fixture
def provider():
    provider = LocalProvider(screen_size=(1024, 768))
    provider.start_emulator()
    yield provider
    provider.stop_emulator()


@pytest.fixture(scope="module")
def booted():
    """One desktop for the tests that only look at a booted desktop (and write nothing another reads)."""
    provider = LocalProvider(screen_size=(1024, 768))
    provider.start_emulator()
    yield provider
    provider.stop_emulator()


def controller_of(provider: LocalProvider) -> PythonController:
    return PythonController(provider.get_ip_address())


def test_desktop_runs_as_user_in_its_own_home(booted):
    result = controller_of(booted).run_command("id -un; echo $HOME; hostname", shell=True)
    assert result["output"].split() == ["user", "/home/user", "osworld"]


def test_a_boot_starts_from_the_seeded_caches_and_copying_caches_out_takes_plain_files_only(booted, tmp_path):
    seeded = desktop_parts().home_template
    if not seeded.name.startswith("home-seeded-"):
        pytest.skip("no seeded home template here: `osworld env setup` builds it (make test does)")
    controller = controller_of(booted)
    # Nothing to make again at boot: what the seeded home holds of each cache is in the booted home. (A desktop of
    # the Ubuntu userland finds every font indexed in the tree's /var/cache/fontconfig: it seeds shaders alone.)
    seeded_caches = [name for name in CACHES if (seeded / ".cache" / name).is_dir()]
    assert seeded_caches
    for name in seeded_caches:
        kept = sorted(p.name for p in (seeded / ".cache" / name).iterdir())
        listed = controller.run_command(f"ls ~/.cache/{name}", shell=True)["output"].split()
        assert kept and set(kept) <= set(listed), name

    controller.run_command("mkdir -p ~/.cache/fontconfig/sub && echo inside > ~/.cache/fontconfig/sub/kept && "
                           "ln -s /etc/passwd ~/.cache/fontconfig/link && mkfifo ~/.cache/fontconfig/fifo && "
                           "ln -s /etc ~/.cache/fontconfig/linked-folder && "
                           "mkdir -p ~/.cache/other && echo no > ~/.cache/other/f", shell=True)
    copied = copy_home_caches(booted._sandbox.child_pid, CACHES, tmp_path, 1 << 30)
    assert (tmp_path / "fontconfig" / "sub" / "kept").read_text() == "inside\n"
    assert not any(p.is_symlink() for p in tmp_path.rglob("*"))
    assert {"link", "fifo", "linked-folder"}.isdisjoint(p.name for p in tmp_path.rglob("*"))
    assert not (tmp_path / "other").exists()
    assert copied == sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    with pytest.raises(ValueError, match="larger than a start-up's"):
        copy_home_caches(booted._sandbox.child_pid, CACHES, tmp_path / "small", 10)


def test_reset_restores_the_home_folder(provider):
    controller = controller_of(provider)
    controller.upload_file("/home/user/Desktop/left-over.txt", b"from the previous task")
    assert controller.get_file("/home/user/Desktop/left-over.txt") == b"from the previous task"
    provider.revert_to_snapshot()
    controller = controller_of(provider)
    assert controller.get_file("/home/user/Desktop/left-over.txt") is None
    assert controller.get_vm_directory_tree("/home/user/Documents") is not None  # template folders are back


def test_reset_kills_apps_of_the_previous_task(provider):
    controller = controller_of(provider)
    controller.launch(["sleep", "600"])
    pids_before = set(provider.process_ids())
    provider.revert_to_snapshot()
    assert not any(os.path.exists(f"/proc/{pid}") and pid in provider.process_ids() for pid in pids_before)
    assert "sleep 600" not in controller_of(provider).run_command("ps -eo args", shell=True)["output"]


def test_host_private_folders_are_hidden_and_root_is_read_only(booted):
    controller = controller_of(booted)
    for hidden in ("/root", "/work", "/tmp"):
        assert controller.run_command(["ls", "-A", hidden])["output"].split() in ([], [".X11-unix"]), hidden
    write = controller.run_command("touch /usr/osworld-probe", shell=True)
    # read-only, or with a root inside (sudo) root's own, closed to the user as on a VM
    refusal = "Permission denied" if booted.sudo_unavailable == "" else "Read-only"
    assert write["returncode"] != 0 and refusal in write["error"]
    assert controller.run_command("cat /etc/shadow", shell=True)["output"] == ""


def test_runtime_and_socket_folders_are_private(booted):
    assert stat.S_IMODE(booted.spec.runtime.stat().st_mode) == 0o700
    sockets = booted.spec.sockets
    assert stat.S_IMODE(sockets.stat().st_mode) == 0o700 and sockets.stat().st_uid == os.geteuid()
    assert stat.S_ISSOCK(os.lstat(booted.socket_path("server")).st_mode)
    assert booted.socket_path("server").parent == sockets


def test_after_a_reset_only_the_new_desktop_answers(provider):
    """The old desktop's server can outlive a reset by a moment; its socket is not the new one's."""
    first = provider.get_ip_address()
    PythonController(first).upload_file("/home/user/old.txt", b"old")
    provider.revert_to_snapshot()
    second = provider.get_ip_address()
    assert second != first and not os.path.exists(first.unix_socket)
    assert PythonController(second).get_file("/home/user/old.txt") is None


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host service")

    def log_message(self, *args):
        pass


@pytest.fixture
def host_service():
    server = HTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def reach_from_inside(provider: LocalProvider, port: int) -> dict:
    code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).close(); "
            "print('reached')\nexcept OSError as e:\n    print('blocked', e)\n")
    return controller_of(provider).run_python_script(code)


def test_no_network_inside_by_default(booted, host_service):
    assert reach_from_inside(booted, host_service)["output"].startswith("blocked")
    # /proc/net is per network namespace (/sys/class/net would show the host's sysfs)
    devices = controller_of(booted).run_command("tail -n +3 /proc/net/dev | cut -d: -f1",
                                                  shell=True)["output"].split()
    assert devices == ["lo"]


def test_network_when_asked(host_service):
    provider = LocalProvider(screen_size=(800, 600), network=True)
    provider.start_emulator()
    try:
        assert reach_from_inside(provider, host_service)["output"].startswith("reached")
    finally:
        provider.stop_emulator()


def test_tcp_service_inside_is_forwarded_to_the_host(provider):
    controller = controller_of(provider)
    controller.upload_file("/home/user/www/index.html", b"served from the sandbox")
    controller.launch(["python3", "-m", "http.server", "8080", "--bind", "127.0.0.1", "--directory", "/home/user/www"])
    host, port = provider.service_endpoint(8080)

    def fetch():
        try:
            with socket.create_connection((host, port), timeout=2) as s:
                s.sendall(b"GET /index.html HTTP/1.0\r\n\r\n")
                data = b""
                while chunk := s.recv(4096):
                    data += chunk
                return data
        except OSError:
            return None

    deadline = time.monotonic() + 15
    body = None
    while time.monotonic() < deadline and not (body and b"served from the sandbox" in body):
        body = fetch()
        time.sleep(0.1)
    assert body and body.endswith(b"served from the sandbox")


def test_two_desktops_run_at_once_without_clashing(booted):
    other = LocalProvider(screen_size=(800, 600))
    other.start_emulator()
    try:
        first, second = controller_of(booted), controller_of(other)
        assert first.get_vm_screen_size() == {"width": 1024, "height": 768}
        assert second.get_vm_screen_size() == {"width": 800, "height": 600}
        first.upload_file("/home/user/mine.txt", b"first")
        assert second.get_file("/home/user/mine.txt") is None
        assert booted.get_ip_address() != other.get_ip_address()
    finally:
        other.stop_emulator()


def test_a_part_of_the_desktop_that_dies_while_it_starts_fails_the_start_at_once(caplog):
    """... after one more boot (a rare crash of GNOME Shell in its first second passes on the next), and names
    how the part ended."""
    config = LocalDesktopConfig(screen_size=(800, 600), desktop_components=(*DESKTOP_COMPONENTS, "false"))
    provider = LocalProvider(config=config)
    started = time.monotonic()
    with pytest.raises(DesktopPartDied, match=r"the desktop's false \(exit code 1\) died while it started"):
        provider.start_emulator()
    assert time.monotonic() - started < 30  # not the start timeout (60 s), twice
    retries = [r.getMessage() for r in caplog.records if "booting the desktop once more" in r.getMessage()]
    assert len(retries) == 1 and "false (exit code 1) died" in retries[0]
    provider.stop_emulator()


def test_a_warm_spare_makes_a_reset_a_switch_to_a_fresh_ready_desktop():
    provider = LocalProvider(screen_size=(800, 600), warm_spare=True)
    provider.start_emulator()
    try:
        controller_of(provider).upload_file("/home/user/Desktop/left-over.txt", b"from the previous task")
        spare_pids = provider.spare_process_ids()
        assert spare_pids and not set(spare_pids) & set(provider.process_ids())
        provider.revert_to_snapshot()
        # the spare is now the desktop: its sandbox and every process of it still running (it was listed
        # while booting, when short-lived helpers such as the home's copy ran too)
        still_running = {pid for pid in spare_pids if not ended(pid)}
        assert spare_pids[0] in still_running and still_running <= set(provider.process_ids())
        controller = controller_of(provider)
        assert controller.get_file("/home/user/Desktop/left-over.txt") is None
        assert controller.run_command("id -un", shell=True)["output"].strip() == "user"
        assert provider.spare_process_ids()  # the next one is on its way
        all_pids = provider.process_ids() + provider.spare_process_ids()
    finally:
        provider.stop_emulator()
    alive = [pid for pid in all_pids if not ended(pid)]
    assert alive == []


def test_a_lazy_spare_is_booted_once_the_desktop_was_reverted_and_the_agent_has_acted():
    provider = LocalProvider(screen_size=(800, 600), warm_spare="lazy")
    env = DesktopEnv(provider=provider, require_a11y_tree=False)

    def spare_sandbox() -> int:
        """The spare's sandbox process (its first and longest-lived: a booting spare also has short-lived
        ones, gone by the time it takes over)."""
        return min(provider.spare_process_ids())

    try:
        env.reset()
        env.step("WAIT", pause=0)
        assert provider.spare_process_ids() == []  # a one-task desktop boots no spare
        env.reset()  # the first revert boots cold ...
        assert provider.spare_process_ids() == []  # ... and no spare while the task is set up and observed
        env.step("import time", pause=0)
        assert provider.spare_process_ids()  # the agent has acted: the next desktop is on its way
        env.step("import time", pause=0)
        spare = spare_sandbox()
        provider.revert_to_snapshot()
        assert spare in provider.process_ids()
        provider.agent_started()
        # the run's last task: the spare takes over and no new one boots for nobody
        spare = spare_sandbox()
        provider.expect_another_reset(False)
        provider.revert_to_snapshot()
        provider.agent_started()
        assert spare in provider.process_ids() and provider.spare_process_ids() == []
        provider.expect_another_reset(False)
        provider.revert_to_snapshot()  # a task retried after all: a cold boot, and still no spare
        provider.agent_started()
        assert provider.process_ids() and provider.spare_process_ids() == []
        provider.expect_another_reset(True)
        provider.revert_to_snapshot()
        assert provider.spare_process_ids() == []
        provider.agent_started()
        assert provider.spare_process_ids()
    finally:
        env.close()


def test_close_leaves_no_process_or_folder_behind():
    provider = LocalProvider(screen_size=(800, 600))
    provider.start_emulator()
    controller_of(provider).launch(["sleep", "600"])
    pids = provider.process_ids()
    env_dir = provider.env_dir
    assert len(pids) > 5 and env_dir.is_dir()
    provider.stop_emulator()
    alive = [pid for pid in pids if not ended(pid)]
    assert alive == []
    assert not env_dir.exists()


def test_a_sandbox_whose_bwrap_is_gone_is_killed_by_the_next_harness():
    """The sandbox's init should die with its outer bwrap (--die-with-parent) but is not trusted to: once
    its env folder is gone, the next harness's prune kills what is left."""
    provider = LocalProvider(screen_size=(800, 600))
    provider.start_emulator()
    try:
        sandbox, env_dir = provider._sandbox, provider.env_dir
        assert sandbox is not None and sandbox.child_pid is not None and is_namespace_init(sandbox.child_pid)
        assert sandbox.process.pid in sandboxes_of(env_dir) and sandbox.child_pid in sandboxes_of(env_dir)
        # what a harness killed at the wrong moment leaves: no folder, and the init stopped (not killed) so
        # that nothing else can end it first
        os.kill(sandbox.child_pid, signal.SIGSTOP)
        shutil.move(str(env_dir), str(env_dir) + "-gone")
        try:
            prune_stale_env_dirs()
            deadline = time.monotonic() + 10
            while is_namespace_init(sandbox.child_pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not is_namespace_init(sandbox.child_pid)
        finally:
            shutil.move(str(env_dir) + "-gone", str(env_dir))
        assert env_dir.parent == runtime_root()
    finally:
        provider.stop_emulator()


def test_folders_of_a_killed_harness_are_pruned_by_the_next_one(tmp_path):
    script = ("from desktop_env.providers.local import LocalProvider\n"
              "p = LocalProvider(screen_size=(800, 600)); p.start_emulator(); print(p.env_dir, flush=True)\n"
              "import time; time.sleep(600)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    env_dir = child.stdout.readline().strip()
    child.kill()
    child.wait()
    assert os.path.isdir(env_dir)
    assert env_dir in [str(p) for p in prune_stale_env_dirs()]
    assert not os.path.exists(env_dir)


def test_a_desktop_served_like_a_vm_answers_on_the_vms_ports_at_its_own_address(provider):
    address = provider.expose_like_vm("auto")
    assert address.startswith("127.0.0.") and address != "127.0.0.1"
    assert requests_get(f"http://{address}:5000/platform") == b"Linux"
    controller = controller_of(provider)
    controller.upload_file("/home/user/www/index.html", b"vlc port")
    controller.launch(["python3", "-m", "http.server", "8080", "--bind", "127.0.0.1", "--directory", "/home/user/www"])
    deadline = time.monotonic() + 15
    body = None
    while time.monotonic() < deadline and body != b"vlc port":
        body = requests_get(f"http://{address}:8080/index.html")
        time.sleep(0.1)
    assert body == b"vlc port"
    # those ports are taken now, so the next desktop (or call) gets the next address; never a non-loopback one
    assert provider.expose_like_vm("auto") != address
    with pytest.raises(ProviderError, match="loopback"):
        provider.expose_like_vm("0.0.0.0")


def requests_get(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read()
    except OSError:
        return None


def test_a_desktop_not_ready_in_time_is_booted_once_more_then_the_error_is_raised(caplog):
    config = LocalDesktopConfig(screen_size=(800, 600), start_timeout=0.5)
    provider = LocalProvider(config=config)
    try:
        with pytest.raises(DesktopNotReady, match=r"the desktop was not ready after 0 s"):
            provider.start_emulator()
        retries = [r.getMessage() for r in caplog.records if "booting the desktop once more" in r.getMessage()]
        assert len(retries) == 1 and "not ready after" in retries[0]
    finally:
        provider.stop_emulator()
