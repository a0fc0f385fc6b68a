import Synchronization

/// Whether this process exports traces (`GATEHOUSE_OTLP_ENDPOINT`). Hot paths that would open a span
/// per database transaction ask here first, so that a node without tracing pays one atomic load, not a
/// span's allocation and task-local juggling.
public enum TracingSwitch {
    private static let on = Atomic<Bool>(false)

    public static var isOn: Bool { on.load(ordering: .relaxed) }

    public static func turnOn() { on.store(true, ordering: .relaxed) }
}
