#if canImport(Glibc)
import Glibc
#endif

/// RT60 of an impulse response by Schroeder backward integration (ISO 3382): the energy decay curve's
/// least-squares slope between `from` and `to` dB (T30: −5 to −35; EDT: 0 to −10), extrapolated to 60 dB.
/// NaN when the curve never reaches `to`.
public func reverberationTime(
    _ response: [Float], sampleRate: Double = 48_000, from: Double = -5, to: Double = -35
) -> Double {
    var remaining = 0.0
    var curve = [Double](repeating: 0, count: response.count)
    for index in response.indices.reversed() {
        remaining += Double(response[index]) * Double(response[index])
        curve[index] = remaining
    }
    guard let total = curve.first, total > 0 else { return .nan }
    let decibels = curve.map { 10 * log10(max($0 / total, 1e-30)) }
    guard let start = decibels.firstIndex(where: { $0 <= from }), let end = decibels.firstIndex(where: { $0 <= to })
    else { return .nan }
    let points = Array(start...end)
    let meanX = points.reduce(0.0) { $0 + Double($1) } / Double(points.count)
    let meanY = points.reduce(0.0) { $0 + decibels[$1] } / Double(points.count)
    var numerator = 0.0
    var denominator = 0.0
    for x in points {
        numerator += (Double(x) - meanX) * (decibels[x] - meanY)
        denominator += (Double(x) - meanX) * (Double(x) - meanX)
    }
    return -60 / (numerator / denominator * sampleRate)
}

/// The normalized correlation of two signals (1: the same, 0: unrelated).
public func correlation(_ a: [Float], _ b: [Float]) -> Double {
    var (ab, aa, bb) = (0.0, 0.0, 0.0)
    for (x, y) in zip(a, b) {
        ab += Double(x) * Double(y)
        aa += Double(x) * Double(x)
        bb += Double(y) * Double(y)
    }
    return ab / (aa * bb).squareRoot()
}
