"""Word lists that tell a follow-up query's noise from its content (read by :mod:`deepcite.research.followup`,
:mod:`deepcite.research.followup_shapes` and :mod:`deepcite.research.followup_terms`).

Each list names one kind of token that never makes a follow-up query by itself: the abbreviations of reported
statistics ("CI 0.91", "OR = 9.2", "p < 0.05"), the words of dates ("March 2001"), references to a document's
own furniture ("Table 2", "Figure 3"), and the words that end a noun phrase when one is read from evidence
text without a tagger (verbs and adverbs of findings: "was associated with", "significantly").
"""

from __future__ import annotations

# abbreviations of reported statistics, as they are written (case matters: "OR" is an odds ratio, "or" a word)
STATISTICS = frozenset(
    """CI OR RR HR SD SE SEM IQR AUC ROC aOR aHR NNT NNH ARR RRR MD SMD WMD df P p N n vs r R2 ICC
    kappa chi""".split()
)

# symbols that only a reported figure carries next to a number ("95%", "p < 0.05", "45 ± 7")
STATISTICS_SYMBOLS = frozenset("% ‰ ± < > ≤ ≥ = ×".split())

# the words of a date; a term left with nothing but these and numbers is a date ("2001-03", "March 2001")
DATE_WORDS = frozenset(
    """january february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec spring summer autumn fall winter year years month months week weeks
    day days""".split()
)

# numbers written as words ("One-hundred-fourteen trauma patients"): a count, never part of a noun phrase
NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million
    billion first second third fourth fifth half quarter""".split()
)

# a document's own furniture: "Table 2", "Figure 3", "Supplementary Appendix" name no entity of the text
FURNITURE = frozenset(
    """table tables figure figures fig fig. panel appendix supplementary supplement section chapter page
    pages eq equation""".split()
)

# words that end a noun phrase read from evidence: verbs, adverbs and the comparatives of findings
PHRASE_BREAKS = frozenset(
    """was were is are be been being has have had do does did may might can could should would will shall
    must also not no yes using used use uses associated compared showed shows show found find finds suggest
    suggests suggested indicate indicates indicated observed performed included include includes including
    received receive receiving underwent undergoing undergo reduce reduces reduced reducing increase increases
    increased increasing occur occurs occurring remain remains appear appears seem seems become becomes lead
    leads cause causes provide provides require requires contain contains involve involves allow allows make
    makes take takes give gives matched adjusted unadjusted conducted explored demonstrated divided excluded
    collected shown known enrolled randomized randomised decrease decreases decreased improve improves improved improving affect affects
    affected predict predicts predicted determine determined evaluate evaluated assess assessed investigate
    investigated examine examined measured reported identified analyzed analysed defined considered remained
    occurred developed required treated administered given based according significantly significant
    respectively higher lower greater less fewer more most better worse similar different independent
    independently whether however although thus therefore moreover furthermore overall total mean median
    versus among between within without during after before following prior study studies patient patients
    group groups arm arms cohort cohorts subject subjects participant participants case cases
    result results conclusion conclusions objective objectives background methods method aim aims purpose
    design setting data""".split()
)

# prefixes of a hyphenated label ("Non-statin group", "Post-op"): capitalised only because the label is
PREFIXES = frozenset("non anti pre post co multi inter intra sub semi over under re un".split())

# a document's own section words: a follow-up made of nothing else ("Main Results Table", "Introduction") names
# no entity of the text
SECTION_WORDS = frozenset(
    """abstract introduction background related work works method methods methodology approach experiments
    experiment experimental setup settings results result main discussion conclusion conclusions evaluation
    evaluations analysis analyses ablation ablations limitations acknowledgements acknowledgments
    acknowledgement references bibliography appendix appendices overview summary preliminaries implementation
    details baselines baseline future ethics statement contributions contribution author authors impact broader
    qualitative quantitative error errors case notes note algorithm algorithms see""".split()
)

# words that open a sentence or clause and that a work's title-case name hardly holds after its first word
# (articles and prepositions are left out: "What Are Little Girls Made Of?", "Here Comes The Sun"): a "name"
# holding one there is a heading run into the sentence below it ("Qualitative Analysis Although DPR", "Evaluation
# We", "Overview Our")
SENTENCE_OPENERS = frozenset(
    """although though however besides given see thus hence whereas unlike finally also we our""".split()
)

# the words of a venue, publisher, licence or copyright line ("Proceedings of the 25th Conference …",
# "Association for Computational Linguistics"): a follow-up read from such a line names where a paper
# appeared, not what it is about
VENUE_WORDS = frozenset(
    """proceedings conference association workshop symposium journal transactions annual meeting arxiv
    preprint copyright licence license press publisher publishers publishing online virtual volume vol issue
    isbn issn doi findings""".split()
)

# the extensions of the files a collection holds or a text names ("wiki_duck.html", "2020.acl-main.447.pdf"): a
# term ending in one is a file's name, not an entity of its text ("Node.js" and "ASP.NET" end in none of them)
FILE_EXTENSIONS = frozenset(
    """pdf docx doc pptx ppt xlsx xls odt ods odp rtf html htm xhtml xml epub md markdown rst txt text tex csv
    tsv json jsonl yaml yml toml ini cfg log png jpg jpeg gif svg tif tiff bmp zip tar gz tgz bz2 xz 7z rar
    py ipynb r sh bat exe bin dll""".split()
)

# the words a release or version is written with beside its number ("Version 2.0", "Release 3"); with the
# pre-release markers ("RC1", "beta2", "v0.5.5") a term of nothing else names a release, not an entity
VERSION_WORDS = frozenset("v version versions release releases build builds revision rev".split())
PRERELEASE_MARKERS = frozenset("rc alpha beta pre preview dev nightly snapshot post".split())

# the endings of a contraction ("we'd", "don't", "they're"): with a pronoun or a function word before them, a
# word of conversation, not a name ("It'll Be Me", a song, is several words and stays a name)
CONTRACTION_ENDINGS = frozenset("d ll re ve m s t".split())
