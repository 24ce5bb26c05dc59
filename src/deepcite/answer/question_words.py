"""Word lists that tell what a question asks for and what an answer sentence holds (read by
:mod:`deepcite.answer.question_kind` and :mod:`deepcite.answer.lead_guard`)."""

from __future__ import annotations

# "what/which <measure>" asks for an amount ("What F1 does …", "What top-20 accuracy …")
MEASURE_NOUNS = frozenset(
    """percentage percent proportion share fraction number amount rate ratio score scores accuracy f1
    precision recall recall@5 recall@10 recall@20 auc bleu rouge size length weight value count cost price
    speed duration lambda λ learning rate rates dimension dimensions average mean median total sum age speedup
    budget salary fee fees temperature height width depth distance capacity population frequency""".split()
)

# "which <noun>" asks for a name ("Which library provided …", "Which company's letter …")
NAME_NOUNS = (
    "library",
    "libraries",
    "company",
    "company's",
    "companies",
    "person",
    "author",
    "authors",
    "organization",
    "organisation",
    "tool",
    "tools",
    "model",
    "models",
    "algorithm",
    "algorithms",
    "dataset",
    "datasets",
    "method",
    "methods",
    "system",
    "systems",
    "team",
    "club",
    "university",
    "agency",
    "code",
    "section",
    "sections",
    "annotation",
)

# comparatives that make a question (or a sentence) a comparison
COMPARATIVES = frozenset(
    """better worse more less fewer higher lower larger smaller faster slower greater superior inferior
    narrower wider longer shorter stronger weaker outperform outperforms""".split()
)

# units and scales written after a number: "8.8 hours", "21.5M", "995.0 questions"
UNITS = frozenset(
    """percent points point pp hours hour minutes minute seconds second secs sec ms days day weeks week months
    month years year words word tokens token papers paper questions question passages passage documents
    instances samples units unit gpus gpu times fold x k m b million millions billion thousand mb gb tb kb
    km m cm mm kg g mg ml l dollars usd eur steps step epochs epoch layers parameters params""".split()
)

# numbers written as words
NUMBER_WORDS = frozenset(
    """two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion dozen
    half twice""".split()
)

# words of a document's furniture that open a heading or a caption ("5.1 Main Results", "Table 2:")
SECTION_WORDS = frozenset(
    """abstract introduction background related work method methods methodology approach model models
    experiments experiment experimental setup results result main discussion conclusion conclusions
    evaluation analysis ablation ablations limitations acknowledgements acknowledgments acknowledgement
    references bibliography appendix appendices overview summary preliminaries implementation details dataset
    datasets data training baselines baseline future ethics statement contributions table figure""".split()
)

# words of a venue, a copyright line or a running head
VENUE_WORDS = frozenset(
    """proceedings conference association workshop symposium journal transactions annual meeting arxiv
    preprint copyright rights reserved licence license vol volume pages pp issue isbn issn doi""".split()
)

# Greek letters as a question spells them ("What weight lambda …" for "λ = 1.1")
GREEK_NAMES = dict(
    zip(
        "αβγδεζηθικλμνξπρστυφχψωΔΘΛΣΦΨΩ",
        """alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi
        chi psi omega delta theta lambda sigma phi psi omega""".split(),
        strict=True,
    )
)


# the units an amount question asks for, by what it measures (answer/asked_units.py): a number
# with another unit does not answer it ("how long does a duck live" is not answered by "less than 1 kg")
MONEY_UNITS = frozenset(
    """$ € £ ¥ usd eur gbp cad aud chf inr cny rmb dollar dollars euro euros pound pounds franc francs cent cents yen
    yuan rupee rupees naira won krona kronor btc bitcoin bitcoins satoshi satoshis eth ether""".split()
)
DURATION_UNITS = frozenset(
    """second seconds sec secs s minute minutes min mins hour hours hr hrs h day days week weeks month months year
    years yr yrs decade decades century centuries step steps epoch epochs iteration iterations""".split()
)
LENGTH_UNITS = frozenset(
    """mm cm m km metre metres meter meters kilometre kilometres kilometer kilometers inch inches ft foot feet
    yard yards mile miles""".split()
)
TEXT_LENGTH_UNITS = frozenset(
    """word words page pages token tokens character characters chars sentence sentences digit digits bit bits byte
    bytes""".split()
)
MASS_UNITS = frozenset(
    "mg g kg gram grams kilogram kilograms tonne tonnes ton tons lb lbs pound pounds ounce ounces oz".split()
)
# the months, as a regular expression's alternatives
MONTH_NAMES = "january|february|march|april|may|june|july|august|september|october|november|december"
# the words that say how often on their own ("daily", "annually")
FREQUENCY_WORDS = frozenset(
    """hourly daily nightly weekly biweekly fortnightly monthly bimonthly quarterly yearly annually biannually
    semiannually""".split()
)
# the periods "every …", "a …", "per …" and "each …" make a frequency of
FREQUENCY_PERIODS = frozenset(
    """second minute hour day night weekday weekend week fortnight month quarter season semester term year decade
    time""".split()
)
DATA_UNITS = frozenset(
    "kb mb gb tb pb byte bytes kilobyte kilobytes megabyte megabytes gigabyte gigabytes terabyte terabytes".split()
)
# a word before what a "how many" question counts that is not itself the thing counted ("how many of the", "how many
# such votes", "how many more")
COUNT_QUALIFIERS = frozenset(
    """of the a an such more other different additional distinct separate total new unique further extra""".split()
)
# words that count people: a reader asks "how many people", a document says "members", "participants", "deaths"
PEOPLE_WORDS = frozenset(
    """people person persons individual individuals participant participants member members attendee attendees
    resident residents inhabitant inhabitants population user users staff employee employees worker workers student
    students patient patients adult adults child children men women death deaths died killed victim victims speaker
    speakers visitor visitors respondent respondents subject subjects volunteer volunteers delegate delegates
    applicant applicants customer customers citizen citizens""".split()
)
