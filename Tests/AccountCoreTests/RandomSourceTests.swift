import AccountCore
import Testing

@Suite("Randomness")
struct RandomSourceTests {
    @Test("strings use only the alphabet, at the requested length, and differ")
    func strings() {
        let alphabet = Array("abc")
        let random = SystemRandom()
        let a = random.string(count: 64, alphabet: alphabet)
        let b = random.string(count: 64, alphabet: alphabet)
        #expect(a.count == 64)
        #expect(a.allSatisfy { alphabet.contains($0) })
        #expect(a != b)
    }
}
