"""`osworld env ...`: set up, check, serve and benchmark the local desktop, and clean up after killed runs."""
from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any

import click
from rich.table import Table

from desktop_env.errors import ProviderError
from desktop_env.server.access_policy import is_loopback

from .limit_options import desktop_limit_options
from .output import console, deprecated, format_option, print_table, rows_text
from .prune_command import prune_command
from .run_options import run_option

# The local desktop's machinery (desktop_env.providers.local, desktop_env.benchmark) is imported by the
# command that uses it, as the provider registry imports a provider when first asked for: at the top,
# it doubled the start-up of every `osworld` command (0.27 -> 0.56 s).


screen_size_option = run_option("screen_size")  # WIDTHxHEIGHT, checked as RunConfig checks it


@click.group("env")
def env_group() -> None:
    """The local desktop: setup, doctor, serve, bench; prune what killed runs left behind."""


@env_group.command("setup")
@click.option("--vscode", is_flag=True, help="Also install VS Code (code-server from the npm registry, a build of "
                                             "a few minutes), which runs otherwise install on first need.")
@click.option("--ubuntu-userland", is_flag=True, help="Also build Ubuntu 22.04's own root filesystem with the VM's "
                                                      "apps (mmdebstrap, as root; about 650 MB from Ubuntu's "
                                                      "archive), which desktops then boot from "
                                                      "(OSWORLD_DESKTOP_SYSTEM=host: Debian's packages).")
def setup_command(vscode: bool, ubuntu_userland: bool) -> None:
    """Build what the local desktop builds once (LocalProvider.prepare): the env server's venv and code,
    the desktop's view (with Ubuntu's fonts), the home template, Chromium 120, the VM's era of Chrome,
    from Debian 11's archive, and GNOME Settings 41, the VM's, from Ubuntu 22.04's (done once, cached)."""
    from desktop_env.providers.local import LocalProvider
    from desktop_env.providers.local.build.prepare import VSCODE

    def progress(line: str) -> None:
        console.print(f"[dim]{line}[/]")

    failed = False
    if ubuntu_userland:  # first: desktops boot from the tree once it is built, and what follows is built for it
        from desktop_env.errors import MissingDependency
        from desktop_env.providers.local.build.ubuntu_userland import ensure_userland

        try:
            console.print(f"{'ubuntu userland:':18} {ensure_userland(progress)}")
        except MissingDependency as e:
            console.print(f"[red]error:[/] {e}")
            failed = True
    built = LocalProvider.prepare(extras=[VSCODE] if vscode else [], retry=True, progress=progress)
    for part in built:
        if part.path is not None:
            console.print(f"{part.name + ':':18} {part.path}")
        elif part.required:
            console.print(f"[red]error:[/] {part.problem()}")
        else:  # desktops do without it, as `osworld env doctor` says
            console.print(f"[yellow]warning:[/] {part.problem()}")
    failed = failed or any(part.error and part.required for part in built)
    if failed:
        sys.exit(1)


@env_group.command("doctor")
@format_option()
def doctor_command(fmt: str) -> None:
    """Check every system dependency of the local desktop; say how to install what is missing."""
    from desktop_env.providers.local.doctor import run_checks

    checks = run_checks()
    header = ["check", "ok", "detail", "fix"]
    rows = [[check.name,
             "[green]yes[/]" if check.ok else "[red]no[/]" if check.required else "[yellow]no[/] (optional)",
             check.detail, check.fix] for check in checks]
    if fmt == "table":
        table = Table(*header)
        for row in rows:
            table.add_row(*row)
        print_table(table)
    else:
        click.echo(rows_text(fmt, header, rows), nl=False)
    if not all(c.ok or not c.required for c in checks):
        sys.exit(1)


@env_group.command("serve")
@click.option("--port", type=int, default=None, help="Also serve the desktop over TCP at HOST:PORT.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address for --port. A loopback address serves this user's processes only; any other needs --token.")
@click.option("--vm-address", default=None, metavar="ADDRESS|auto",
              help="Serve the desktop as a VM is reached: the env server at ADDRESS:5000, Chrome's DevTools at "
                   "ADDRESS:9222, VLC at ADDRESS:8080 (a loopback address; auto picks a free 127.0.0.N).")
@click.option("--token", envvar="OSWORLD_SERVER_TOKEN", default=None,
              help="Require 'Authorization: Bearer TOKEN' on every TCP request (env OSWORLD_SERVER_TOKEN).")
@screen_size_option
@click.option("--network/--no-network", default=False, show_default=True, help="Give the desktop network access.")
@click.option("--watch", is_flag=True, help="Show the desktop live in the browser (view-only): its URL is printed "
                                            "(docs/HUMANS.md).")
@desktop_limit_options
def serve_command(port: int | None, host: str, vm_address: str | None, token: str | None,
                  screen_size: tuple[int, int], network: bool, watch: bool,
                  desktop_memory: str, desktop_pids: str, desktop_cpu_weight: str, desktop_tmpfs: str,
                  desktop_disk: str) -> None:
    """Start one desktop and keep it running until Ctrl-C."""
    from desktop_env.providers.local import LocalDesktopConfig, LocalProvider
    from desktop_env.providers.local.limits import DesktopLimits

    if port is not None and not is_loopback(host) and not token:
        raise click.BadParameter(f"{host} is not a loopback address: serving it needs --token "
                                 "(or OSWORLD_SERVER_TOKEN)", param_hint="--host")
    limits = DesktopLimits.from_options(memory=desktop_memory, pids=desktop_pids, cpu_weight=desktop_cpu_weight,
                                        tmpfs=desktop_tmpfs, disk=desktop_disk)
    provider = LocalProvider(config=LocalDesktopConfig(screen_size=screen_size, network=network, limits=limits,
                                                       public_token=token))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    viewed = None
    try:
        with console.status("starting the desktop..."):
            provider.start_emulator()
        console.print(f"desktop ready in {provider.last_ready_s:.2f} s")
        console.print(f"env server: {provider.get_ip_address()}")
        if port is not None:
            tcp_host, tcp_port = provider.expose_server(port, host)
            console.print(f"env server over TCP: http://{tcp_host}:{tcp_port}")
        if vm_address is not None:
            address = provider.expose_like_vm(vm_address)
            ports = ", ".join(f"{address}:{p}" for p in provider.config.forward_ports)
            console.print(f"as a VM: env server http://{address}:5000, services at {ports}")
        for service in provider.config.forward_ports:
            console.print(f"sandbox port {service}: unix:{provider.socket_path(f'port-{service}')}")
        viewed = show_live(provider) if watch else None  # its page lives as long as this reference
        console.print("Ctrl-C stops the desktop.")
        sys.stdout.flush()
        while not stop.wait(0.5):
            if not provider.is_running():
                console.print("[red]the desktop exited[/]")
                sys.exit(1)
    except ProviderError as e:
        console.print(f"[red]error:[/] {e}")
        sys.exit(1)
    except KeyboardInterrupt:
        pass
    finally:
        if viewed is not None:
            viewed.controller.close()
        provider.stop_emulator()
        console.print("desktop stopped")


def show_live(provider: Any) -> Any:
    """The served desktop in the live view, its URL (with the token) printed as `run --watch` prints it; returns
    what keeps its page registered (None when it cannot be shown)."""
    from desktop_env.controllers.python import PythonController
    from desktop_env.live_view.desktop import ServedDesktop, full_url, show
    from desktop_env.live_view.server import LiveViewUnavailable

    served = ServedDesktop(provider, PythonController(provider.get_ip_address()))
    try:
        desktop = show(served, "env-serve", "the desktop of osworld env serve", human=False, announce=False)
    except LiveViewUnavailable as e:
        console.print(f"[red]no live view:[/] {e}")
        served.controller.close()
        return None
    console.print(f"live view: {full_url(desktop)}", soft_wrap=True)
    return served


@env_group.command("bench")
@format_option(help="table; json (every figure); markdown, csv or tsv: the table's rows.")
@click.option("--json", "as_json", is_flag=True, help=deprecated("--json", "--format json"))
@screen_size_option
@click.option("--resets", default=5, show_default=True, help="Number of resets to time.")
@click.option("--samples", default=30, show_default=True, help="Screenshots and actions to time.")
def bench_command(fmt: str, as_json: bool, screen_size: tuple[int, int], resets: int, samples: int) -> None:
    """Measure reset, screenshot, a11y tree and action latency and memory of one desktop."""
    from desktop_env.benchmark import TARGETS, machine_summary, run_bench

    fmt = "json" if as_json else fmt
    progress = (lambda _: None) if fmt != "table" else (lambda msg: console.print(f"[dim]{msg}[/]"))
    result = run_bench(screen_size=screen_size, resets=resets, screenshots=samples, actions=samples,
                       progress=progress)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    header = ["figure", "median", "p95", "samples", "target", "note"]
    rows = []
    for name, fig in result.figures.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else ("[green]<= " if fig.median <= target else "[red]> ") + f"{target:g}[/]"
        note = ", ".join(f"{k} {v:g}" for k, v in fig.extra.items())
        rows.append([name, f"{fig.median:g} {fig.unit}", f"{fig.p95:g}", str(fig.samples), verdict, note])
    if fmt != "table":
        click.echo(rows_text(fmt, header, rows), nl=False)
        return
    table = Table(*header, title=f"local desktop {screen_size[0]}x{screen_size[1]} on {machine_summary()}")
    for row in rows:
        table.add_row(*row)
    print_table(table)


env_group.add_command(prune_command)
