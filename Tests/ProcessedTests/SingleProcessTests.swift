import Testing

@testable import Processed

@Suite struct SingleProcessTests {
  /// The number in a generated id such as `"#42"`.
  private func number(of process: SingleProcess) -> UInt64? {
    guard process.id.first == "#" else { return nil }
    return UInt64(process.id.dropFirst())
  }

  @Test func distinctInitsMakeDistinctProcesses() {
    let first = SingleProcess()
    let second = SingleProcess()
    #expect(first != second)
    #expect(first.id != second.id)
    #expect(first == first)
  }

  @Test func generatedIdsAreAHashAndAnIncreasingNumber() throws {
    let first = SingleProcess()
    let second = SingleProcess()
    let firstNumber = try #require(number(of: first))
    let secondNumber = try #require(number(of: second))
    #expect(secondNumber > firstNumber)
    #expect(first.id == "#\(firstNumber)")
  }

  @Test func aCopyEqualsTheOriginal() {
    let process = SingleProcess()
    let copy = process
    #expect(copy == process)
    #expect(copy.hashValue == process.hashValue)
  }

  @Test(arguments: ["1", "save", "", "#1"])
  func theSameChosenIdMakesEqualProcesses(id: String) {
    #expect(SingleProcess(id: id) == SingleProcess(id: id))
    #expect(SingleProcess(id: id).hashValue == SingleProcess(id: id).hashValue)
    #expect(SingleProcess(id: id).id == id)
  }

  @Test func differentChosenIdsMakeDifferentProcesses() {
    #expect(SingleProcess(id: "1") != SingleProcess(id: "2"))
  }

  @Test func aGeneratedProcessNeverEqualsANamedOne() {
    let generated = SingleProcess()
    let named = SingleProcess(id: generated.id)
    #expect(named.id == generated.id)
    #expect(named != generated)
    #expect(Set([generated, named]).count == 2)
  }

  @Test func generatedProcessesFromManyTasksAreAllDistinct() async {
    let processes = await withTaskGroup(of: [SingleProcess].self) { group in
      for _ in 0..<10 {
        group.addTask { (0..<1000).map { _ in SingleProcess() } }
      }
      var all: [SingleProcess] = []
      for await batch in group { all += batch }
      return all
    }
    #expect(processes.count == 10_000)
    #expect(Set(processes).count == 10_000)
    #expect(Set(processes.map(\.id)).count == 10_000)
  }

  @Test func debugDescriptions() throws {
    let generated = SingleProcess()
    let generatedNumber = try #require(number(of: generated))
    #expect(generated.debugDescription == "SingleProcess(#\(generatedNumber))")
    #expect(SingleProcess(id: "save").debugDescription == #"SingleProcess(id: "save")"#)
    #expect(String(describing: SingleProcess(id: "a\"b")) == #"SingleProcess(id: "a\"b")"#)
  }
}
