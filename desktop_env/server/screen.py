"""Screen capture of the X display: size, pointer position and PNG screenshots.

Screenshots are the hot path of every agent step, so the pixels come straight from the
X server through MIT-SHM (one shared-memory segment reused across captures), read by
libX11/libXext through ctypes. No helper process is spawned. Where shared memory cannot
work (a display on another host) the plain GetImage request is used instead.
The mouse cursor is not part of the framebuffer; it is fetched with XFixes and
composited onto the capture.
"""
from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import struct
import threading
import zlib

from PIL import Image

# Measured on a 1920x1080 xfce desktop (wallpaper, panel, three windows): zlib level 1
# takes ~25 ms for 513 kB, level 3 ~29 ms for 497 kB, level 6 ~53 ms for 472 kB.
PNG_COMPRESS_LEVEL = 1

_log = logging.getLogger(__name__)

_ZPIXMAP = 2
_ALL_PLANES = ctypes.c_ulong(~0).value
_LSB_FIRST = 0
_IPC_PRIVATE = 0
_IPC_CREAT = 0o1000
_IPC_RMID = 0


class ScreenError(RuntimeError):
    """The X display could not be opened, queried or captured."""


class _XImageFuncs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_void_p) for name in (
        "create_image", "destroy_image", "get_pixel", "put_pixel", "sub_image", "add_pixel")]


class _XImage(ctypes.Structure):
    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
        ("red_mask", ctypes.c_ulong),
        ("green_mask", ctypes.c_ulong),
        ("blue_mask", ctypes.c_ulong),
        ("obdata", ctypes.c_void_p),
        ("f", _XImageFuncs),
    ]


class _XShmSegmentInfo(ctypes.Structure):
    _fields_ = [
        ("shmseg", ctypes.c_ulong),
        ("shmid", ctypes.c_int),
        ("shmaddr", ctypes.c_void_p),
        ("readOnly", ctypes.c_int),
    ]


class _XErrorEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("resourceid", ctypes.c_ulong),
        ("serial", ctypes.c_ulong),
        ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte),
        ("minor_code", ctypes.c_ubyte),
    ]


class _XFixesCursorImage(ctypes.Structure):
    _fields_ = [
        ("x", ctypes.c_short),
        ("y", ctypes.c_short),
        ("width", ctypes.c_ushort),
        ("height", ctypes.c_ushort),
        ("xhot", ctypes.c_ushort),
        ("yhot", ctypes.c_ushort),
        ("cursor_serial", ctypes.c_ulong),
        ("pixels", ctypes.POINTER(ctypes.c_ulong)),
        ("atom", ctypes.c_ulong),
        ("name", ctypes.c_char_p),
    ]


_ErrorHandler = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_XErrorEvent))
_IOErrorHandler = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_IOErrorExitHandler = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def _declare(lib: ctypes.CDLL, name: str, restype, *argtypes) -> None:
    function = getattr(lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)


class _Libs:
    """libX11, libXext, libXfixes and libc with the signatures we call, loaded once."""

    _instance: _Libs | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        vp, c_int, c_uint, c_ulong = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_ulong
        pint = ctypes.POINTER(c_int)
        puint = ctypes.POINTER(c_uint)
        pulong = ctypes.POINTER(c_ulong)
        ximage_p = ctypes.POINTER(_XImage)

        self.x11 = ctypes.CDLL("libX11.so.6")
        _declare(self.x11, "XOpenDisplay", vp, ctypes.c_char_p)
        _declare(self.x11, "XCloseDisplay", c_int, vp)
        _declare(self.x11, "XDefaultScreen", c_int, vp)
        _declare(self.x11, "XRootWindow", c_ulong, vp, c_int)
        _declare(self.x11, "XDefaultVisual", vp, vp, c_int)
        _declare(self.x11, "XDefaultDepth", c_int, vp, c_int)
        _declare(self.x11, "XGetGeometry", c_int, vp, c_ulong, pulong, pint, pint,
                 puint, puint, puint, puint)
        _declare(self.x11, "XQueryPointer", c_int, vp, c_ulong, pulong, pulong, pint, pint,
                 pint, pint, puint)
        _declare(self.x11, "XGetImage", ximage_p, vp, c_ulong, c_int, c_int, c_uint, c_uint,
                 c_ulong, c_int)
        _declare(self.x11, "XDestroyImage", c_int, ximage_p)
        _declare(self.x11, "XSync", c_int, vp, c_int)
        _declare(self.x11, "XFree", c_int, vp)
        _declare(self.x11, "XSetErrorHandler", vp, _ErrorHandler)
        _declare(self.x11, "XGetErrorText", c_int, vp, c_int, ctypes.c_char_p, c_int)
        _declare(self.x11, "XSetIOErrorHandler", vp, _IOErrorHandler)
        # Xlib calls exit() when the connection to the X server breaks, which would take
        # the whole env server down with it. libX11 >= 1.7 lets a per-display exit handler
        # return instead; older versions offer no way out.
        self.has_io_exit_handler = hasattr(self.x11, "XSetIOErrorExitHandler")
        if self.has_io_exit_handler:
            _declare(self.x11, "XSetIOErrorExitHandler", None, vp, _IOErrorExitHandler, vp)

        self.xext = ctypes.CDLL("libXext.so.6")
        _declare(self.xext, "XShmQueryExtension", c_int, vp)
        _declare(self.xext, "XShmCreateImage", ximage_p, vp, vp, c_uint, c_int, vp,
                 ctypes.POINTER(_XShmSegmentInfo), c_uint, c_uint)
        _declare(self.xext, "XShmAttach", c_int, vp, ctypes.POINTER(_XShmSegmentInfo))
        _declare(self.xext, "XShmDetach", c_int, vp, ctypes.POINTER(_XShmSegmentInfo))
        _declare(self.xext, "XShmGetImage", c_int, vp, c_ulong, ximage_p, c_int, c_int, c_ulong)

        try:
            self.xfixes: ctypes.CDLL | None = ctypes.CDLL("libXfixes.so.3")
        except OSError:
            self.xfixes = None  # screenshots still work, just without the cursor drawn in
        else:
            _declare(self.xfixes, "XFixesQueryExtension", c_int, vp, pint, pint)
            _declare(self.xfixes, "XFixesGetCursorImage", ctypes.POINTER(_XFixesCursorImage), vp)

        self.libc = ctypes.CDLL(None, use_errno=True)
        _declare(self.libc, "shmget", c_int, c_int, ctypes.c_size_t, c_int)
        _declare(self.libc, "shmat", vp, c_int, vp, c_int)
        _declare(self.libc, "shmdt", c_int, vp)
        _declare(self.libc, "shmctl", c_int, c_int, c_int, vp)

        # Xlib's default handlers print and exit the process; ours record what happened
        # so the failing call can raise instead. They are process-wide, hence installed
        # once here, and every use of these libraries holds this lock.
        self.lock = threading.Lock()
        self.last_error: str | None = None
        self.broken_displays: set[int] = set()
        self._error_handler = _ErrorHandler(self._on_x_error)
        self.x11.XSetErrorHandler(self._error_handler)
        self._io_error_handler = _IOErrorHandler(self._on_io_error)
        self.x11.XSetIOErrorHandler(self._io_error_handler)
        self.io_exit_handler = _IOErrorExitHandler(lambda display, data: None)

    def _on_io_error(self, display) -> int:
        self.broken_displays.add(display)
        return 0

    def _on_x_error(self, display, event) -> int:
        buffer = ctypes.create_string_buffer(256)
        self.x11.XGetErrorText(display, event.contents.error_code, buffer, len(buffer))
        self.last_error = (f"{buffer.value.decode(errors='replace')} "
                           f"(request {event.contents.request_code}.{event.contents.minor_code})")
        return 0

    @classmethod
    def get(cls) -> _Libs:
        with cls._instance_lock:
            if cls._instance is None:
                try:
                    cls._instance = cls()
                except OSError as error:
                    raise ScreenError(f"cannot load the X client libraries: {error}") from error
            return cls._instance


def _raw_mode(image: _XImage) -> str:
    """Pillow's name for the layout of the server's ZPixmap pixels."""
    masks = (image.red_mask, image.green_mask, image.blue_mask)
    if image.bits_per_pixel == 32 and masks == (0xFF0000, 0xFF00, 0xFF):
        return "BGRX" if image.byte_order == _LSB_FIRST else "XRGB"
    if (image.bits_per_pixel == 16 and masks == (0xF800, 0x7E0, 0x1F)
            and image.byte_order == _LSB_FIRST):
        return "BGR;16"
    raise ScreenError(
        f"unsupported X pixel format: depth {image.depth}, {image.bits_per_pixel} bits per "
        f"pixel, masks {tuple(hex(m) for m in masks)}, byte order {image.byte_order}")


class _ShmCapture:
    """One shared-memory XImage of the root window's size, reused for every capture."""

    def __init__(self, libs: _Libs, display: int, screen: int, width: int, height: int):
        self._libs = libs
        self._display = display
        self.size = (width, height)
        self._segment = _XShmSegmentInfo(shmid=-1)
        self._image = libs.xext.XShmCreateImage(
            display, libs.x11.XDefaultVisual(display, screen),
            libs.x11.XDefaultDepth(display, screen), _ZPIXMAP, None,
            ctypes.byref(self._segment), width, height)
        if not self._image:
            raise ScreenError("XShmCreateImage failed")
        self._attached = False
        try:
            self.raw_mode = _raw_mode(self._image.contents)
            self._attach()
        except Exception:
            self.close()
            raise

    def _attach(self) -> None:
        libs, image = self._libs, self._image.contents
        size = image.bytes_per_line * image.height
        self._segment.shmid = libs.libc.shmget(_IPC_PRIVATE, size, _IPC_CREAT | 0o600)
        if self._segment.shmid < 0:
            raise ScreenError(f"shmget of {size} bytes failed: {os.strerror(ctypes.get_errno())}")
        address = libs.libc.shmat(self._segment.shmid, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise ScreenError(f"shmat failed: {os.strerror(ctypes.get_errno())}")
        self._segment.shmaddr = address
        image.data = address
        self._segment.readOnly = 0
        libs.last_error = None
        attached = libs.xext.XShmAttach(self._display, ctypes.byref(self._segment))
        libs.x11.XSync(self._display, 0)
        # A server on another host accepts the request but cannot see our segment;
        # the error only arrives with the sync.
        if not attached or libs.last_error:
            raise ScreenError(f"XShmAttach failed: {libs.last_error or 'refused'}")
        self._attached = True
        # Marked for removal now, so the segment goes away once both sides detach,
        # even if this process is killed.
        libs.libc.shmctl(self._segment.shmid, _IPC_RMID, None)

    def grab(self, root: int) -> Image.Image:
        libs, image = self._libs, self._image.contents
        libs.last_error = None
        if not libs.xext.XShmGetImage(self._display, root, self._image, 0, 0, _ALL_PLANES):
            raise ScreenError(f"XShmGetImage failed: {libs.last_error or 'unknown error'}")
        pixels = (ctypes.c_char * (image.bytes_per_line * image.height)).from_address(image.data)
        # frombytes copies (and converts), so the segment may be overwritten by the next grab.
        return Image.frombytes("RGB", self.size, pixels, "raw",
                               self.raw_mode, image.bytes_per_line)

    def close(self) -> None:
        libs = self._libs
        if self._attached:
            libs.xext.XShmDetach(self._display, ctypes.byref(self._segment))
            libs.x11.XSync(self._display, 0)
            self._attached = False
        if self._segment.shmaddr:
            libs.libc.shmdt(self._segment.shmaddr)
            self._segment.shmaddr = None
        if self._segment.shmid >= 0:
            libs.libc.shmctl(self._segment.shmid, _IPC_RMID, None)
            self._segment.shmid = -1
        if self._image:
            # XDestroyImage would free() the data pointer, which is shared memory here.
            self._image.contents.data = None
            libs.x11.XDestroyImage(self._image)
            self._image = None


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return (struct.pack(">I", len(payload)) + kind + payload
            + struct.pack(">I", zlib.crc32(payload, zlib.crc32(kind))))


def encode_png(image: Image.Image, level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """An image as an 8-bit RGB PNG, every row with filter type None.

    Pillow's encoder picks a filter per row by trying all five, which costs ~50 ms on a
    1920x1080 screen, more than the compression itself; on screen content (flat areas,
    repeated glyphs) the unfiltered rows also compress smaller (513 kB against Pillow's
    652 kB at level 1 on the same screenshot).
    """
    if image.mode != "RGB":
        image = image.convert("RGB")
    width, height = image.size
    stride = width * 3
    pixels = memoryview(image.tobytes())
    no_filter = b"\x00"
    rows = b"".join(part for top in range(0, height * stride, stride)
                    for part in (no_filter, pixels[top:top + stride]))
    compressor = zlib.compressobj(level, zlib.DEFLATED, 15, 8)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return b"".join((
        b"\x89PNG\r\n\x1a\n",
        _png_chunk(b"IHDR", header),
        _png_chunk(b"IDAT", compressor.compress(rows) + compressor.flush()),
        _png_chunk(b"IEND", b""),
    ))


class Screen:
    """One X connection to a display. Safe to share between threads."""

    def __init__(self, display: str | None = None, use_shm: bool = True):
        name = display if display is not None else os.environ.get("DISPLAY")
        if not name:
            raise ScreenError("no X display given and $DISPLAY is not set")
        self.display_name = name
        self._libs = libs = _Libs.get()
        self._shm: _ShmCapture | None = None
        with libs.lock:
            self._display = libs.x11.XOpenDisplay(name.encode())
            if not self._display:
                raise ScreenError(f"cannot open X display {name!r}")
            if libs.has_io_exit_handler:
                libs.x11.XSetIOErrorExitHandler(self._display, libs.io_exit_handler, None)
            self._screen = libs.x11.XDefaultScreen(self._display)
            self._root = libs.x11.XRootWindow(self._display, self._screen)
            self._use_shm = use_shm and bool(libs.xext.XShmQueryExtension(self._display))
            self._has_xfixes = self._query_xfixes()

    def _query_xfixes(self) -> bool:
        if self._libs.xfixes is None:
            return False
        event_base, error_base = ctypes.c_int(), ctypes.c_int()
        return bool(self._libs.xfixes.XFixesQueryExtension(
            self._display, ctypes.byref(event_base), ctypes.byref(error_base)))

    def _raise_if_broken(self) -> None:
        if self._display in self._libs.broken_displays:
            raise ScreenError(f"lost the connection to X display {self.display_name!r}")

    @contextlib.contextmanager
    def _connection(self):
        with self._libs.lock:
            if not self._display:
                raise ScreenError(f"screen of display {self.display_name!r} is closed")
            self._raise_if_broken()
            try:
                yield
            except ScreenError:
                self._raise_if_broken()  # the better explanation of the failure
                raise
            # Calls on a broken connection return zeros rather than failing.
            self._raise_if_broken()

    def _root_size(self) -> tuple[int, int]:
        # Asked of the server each time (not the value cached at connect) so a resize
        # of the root window is noticed.
        root = ctypes.c_ulong()
        x, y = ctypes.c_int(), ctypes.c_int()
        width, height, border, depth = (ctypes.c_uint() for _ in range(4))
        outputs = (root, x, y, width, height, border, depth)
        if not self._libs.x11.XGetGeometry(self._display, self._root,
                                           *(ctypes.byref(value) for value in outputs)):
            raise ScreenError(f"cannot query the size of display {self.display_name!r}")
        return width.value, height.value

    def size(self) -> tuple[int, int]:
        with self._connection():
            size = self._root_size()
        return size

    def _pointer(self) -> tuple[int, int]:
        root, child = ctypes.c_ulong(), ctypes.c_ulong()
        root_x, root_y, win_x, win_y = (ctypes.c_int() for _ in range(4))
        mask = ctypes.c_uint()
        self._libs.x11.XQueryPointer(
            self._display, self._root, ctypes.byref(root), ctypes.byref(child),
            ctypes.byref(root_x), ctypes.byref(root_y), ctypes.byref(win_x), ctypes.byref(win_y),
            ctypes.byref(mask))
        return root_x.value, root_y.value

    def cursor_position(self) -> tuple[int, int]:
        with self._connection():
            position = self._pointer()
        return position

    def _grab(self) -> Image.Image:
        size = self._root_size()
        if self._use_shm:
            if self._shm is not None and self._shm.size != size:
                self._shm.close()
                self._shm = None
            if self._shm is None:
                try:
                    self._shm = _ShmCapture(self._libs, self._display, self._screen, *size)
                except ScreenError as problem:
                    _log.info("no shared memory with X display %s (%s): capturing with GetImage",
                              self.display_name, problem)
                    self._use_shm = False
            if self._shm is not None:
                return self._shm.grab(self._root)
        return self._grab_without_shm(*size)

    def _grab_without_shm(self, width: int, height: int) -> Image.Image:
        libs = self._libs
        libs.last_error = None
        image_p = libs.x11.XGetImage(self._display, self._root, 0, 0, width, height,
                                     _ALL_PLANES, _ZPIXMAP)
        if not image_p:
            raise ScreenError(f"XGetImage failed: {libs.last_error or 'unknown error'}")
        try:
            image = image_p.contents
            pixels = ctypes.string_at(image.data, image.bytes_per_line * image.height)
            return Image.frombytes("RGB", (width, height), pixels, "raw",
                                   _raw_mode(image), image.bytes_per_line)
        finally:
            libs.x11.XDestroyImage(image_p)

    def _cursor(self) -> tuple[Image.Image, tuple[int, int]] | None:
        """The cursor sprite (straight RGBA) and where its top-left corner goes."""
        xfixes = self._libs.xfixes
        if not self._has_xfixes or xfixes is None:  # _has_xfixes: loaded, and the server has it
            return None
        cursor_p = xfixes.XFixesGetCursorImage(self._display)
        if not cursor_p:
            return None
        try:
            cursor = cursor_p.contents
            count = cursor.width * cursor.height
            if count == 0:
                return None
            # XFixes hands out one premultiplied ARGB pixel per C long; keep the low
            # 32 bits of each (B, G, R, A on a little-endian host).
            longs = ctypes.string_at(cursor.pixels, count * ctypes.sizeof(ctypes.c_ulong))
            argb = bytearray(count * 4)
            step = ctypes.sizeof(ctypes.c_ulong)
            for channel in range(4):
                argb[channel::4] = longs[channel::step]
            sprite = Image.frombytes("RGBa", (cursor.width, cursor.height), bytes(argb),
                                     "raw", "BGRa").convert("RGBA")
            return sprite, (cursor.x - cursor.xhot, cursor.y - cursor.yhot)
        finally:
            self._libs.x11.XFree(cursor_p)

    def screenshot(self) -> Image.Image:
        """The whole screen at native size as an RGB image, cursor drawn in."""
        with self._connection():
            image = self._grab()
            cursor = self._cursor()
        if cursor is not None:
            sprite, position = cursor
            image.paste(sprite, position, sprite)
        return image

    def screenshot_png(self) -> bytes:
        return encode_png(self.screenshot())

    def close(self) -> None:
        with self._libs.lock:
            if self._shm is not None:
                self._shm.close()
                self._shm = None
            if self._display:
                self._libs.x11.XCloseDisplay(self._display)
                # The address may be handed out again to a later connection.
                self._libs.broken_displays.discard(self._display)
                self._display = None

    def __enter__(self) -> Screen:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
