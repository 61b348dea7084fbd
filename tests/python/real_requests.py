"""Real English requests for the real-weights tests, written here: MMLU-style questions (a question and four
lettered choices; the continuation is the letter) and HellaSwag-style contexts (a sentence and four endings), plus a
passage of prose. Each set is built from small tables so that it holds enough questions for agreement rates."""

PASSAGE = (
    "The river begins as snow on the high slopes, where the sun is weak for most of the year. In spring the snow "
    "melts, and small streams run down through the pine forest, joining one another until they become a single "
    "channel wide enough for a boat. Farmers in the valley have used this water for centuries. They dug canals that "
    "carry it to their fields of wheat and barley, and they built mills whose wheels turned with the current. Today "
    "most of the mills are museums, but the canals still work, and every summer the villages hold a festival to "
    "thank the river for the harvest. Visitors walk along the old towpaths, eat bread baked in wood ovens, and "
    "listen to music played on instruments that were made in the same workshops two hundred years ago. When the "
    "festival ends, the water keeps moving, past the last village and the salt marshes, until it reaches the sea. "
    "Scientists who study the river say that its flow has changed over the past fifty years. Warmer winters mean "
    "less snow, and the melt now starts several weeks earlier than it did when their grandparents were children. "
    "The farmers have noticed too: some have planted crops that need less water, while others have built ponds to "
    "store the spring flood for the dry months of late summer."
)

_CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Egypt", "Cairo"),
             ("Canada", "Ottawa"), ("Germany", "Berlin"), ("Russia", "Moscow"), ("Greece", "Athens"),
             ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Norway", "Oslo"), ("Portugal", "Lisbon"),
             ("Ireland", "Dublin"), ("Austria", "Vienna")]
_OPPOSITES = [("hot", "cold"), ("up", "down"), ("early", "late"), ("happy", "sad"), ("open", "closed"),
              ("light", "dark"), ("fast", "slow"), ("full", "empty"), ("wet", "dry"), ("strong", "weak")]
_SOUNDS = [("dog", "barks"), ("cat", "meows"), ("cow", "moos"), ("lion", "roars"), ("duck", "quacks"),
           ("horse", "neighs"), ("snake", "hisses"), ("owl", "hoots")]
_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
            "twelve"]


def _question(subject: str, question: str, choices: list, answer: int) -> dict:
    letters = "ABCD"
    body = "".join(f"{letter}. {choice}\n" for letter, choice in zip(letters, choices))
    context = (f"The following are multiple choice questions (with answers) about {subject}.\n\n"
               f"{question}\n{body}Answer:")
    return {"context": context, "continuations": [f" {letter}" for letter in letters], "answer": answer}


def mmlu_style() -> list:
    """Questions, each with its four continuations " A" .. " D" and the index of the right one."""
    questions = []
    for i, (country, capital) in enumerate(_CAPITALS):
        others = [c for _, c in _CAPITALS if c != capital]
        choices = [others[(i + k) % len(others)] for k in (1, 4, 7)]
        choices.insert(i % 4, capital)
        questions.append(_question("geography", f"What is the capital of {country}?", choices, i % 4))
    for i, (word, opposite) in enumerate(_OPPOSITES):
        others = [o for _, o in _OPPOSITES if o != opposite]
        choices = [others[(i + k) % len(others)] for k in (2, 3, 5)]
        choices.insert((i + 1) % 4, opposite)
        questions.append(_question("English vocabulary", f"Which word means the opposite of \"{word}\"?", choices,
                                   (i + 1) % 4))
    for i in range(15):
        a, b = 1 + i % 6, 2 + (3 * i) % 5
        total = a + b
        choices = [_NUMBERS[(total + k) % len(_NUMBERS)] for k in (1, 2, 3)]
        choices.insert((i + 2) % 4, _NUMBERS[total])
        questions.append(_question("elementary mathematics", f"What is {_NUMBERS[a]} plus {_NUMBERS[b]}?", choices,
                                   (i + 2) % 4))
    return questions


def hellaswag_style() -> list:
    """Contexts, each with four endings (the first the sensible one)."""
    items = []
    for i, (animal, sound) in enumerate(_SOUNDS):
        wrong = [s for _, s in _SOUNDS if s != sound]
        items.append({"context": f"When the farmer opened the gate in the morning, the {animal}",
                      "continuations": [f" {sound} loudly at him.", f" {wrong[i % 7]} loudly at him.",
                                        f" {wrong[(i + 3) % 7]} loudly at him.", " turned into a bicycle."],
                      "answer": 0})
    for i, (country, capital) in enumerate(_CAPITALS[:10]):
        items.append({"context": f"After a long flight, the tourists finally landed in {capital}, the capital of",
                      "continuations": [f" {country}.", f" {_CAPITALS[(i + 1) % 15][0]}.",
                                        f" {_CAPITALS[(i + 5) % 15][0]}.", " the moon."],
                      "answer": 0})
    return items
