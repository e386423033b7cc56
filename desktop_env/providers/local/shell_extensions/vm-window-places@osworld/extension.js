/* exported init */
// Each new normal window of an app listed in places.json (by WM_CLASS) is moved and sized to
// the frame rectangle given there (x, y, width, height: what is seen, shadows left out) as
// soon as it is mapped, where mutter's placement put it, as OSWorld's VM shows that app's
// windows. desktop_view writes places.json from vm_desktop.WINDOW_PLACES.

const {Meta} = imports.gi;

const ExtensionUtils = imports.misc.extensionUtils;

function readPlaces() {
    const file = ExtensionUtils.getCurrentExtension().dir.get_child('places.json');
    try {
        const [, contents] = file.load_contents(null);
        return JSON.parse(new TextDecoder().decode(contents));
    } catch (e) {
        logError(e, `vm-window-places: cannot read ${file.get_path()}`);
        return {};
    }
}

class Extension {
    enable() {
        this._places = readPlaces();
        this._placed = new WeakSet();   // a window mapped again (hidden, then shown) keeps its place
        this._mapId = global.window_manager.connect('map', (shellwm, actor) => this._place(actor.meta_window));
    }

    _place(window) {
        const place = this._places[window.get_wm_class()];
        if (!place || window.get_window_type() !== Meta.WindowType.NORMAL || this._placed.has(window))
            return;
        this._placed.add(window);
        const [x, y, width, height] = place;
        window.move_resize_frame(false, x, y, width, height);
    }

    disable() {
        global.window_manager.disconnect(this._mapId);
    }
}

function init() {
    return new Extension();
}
