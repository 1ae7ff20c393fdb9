import Foundation

/// Waits until `condition` holds, looking every 10 ms for at most `seconds`; returns whether it held.
///
/// For tests that wait for something to happen (a row, a file, a count): they go on as soon as it has, where a
/// fixed sleep would wait its whole length every time and still be too short on a loaded machine.
@discardableResult
public func eventually(_ seconds: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
