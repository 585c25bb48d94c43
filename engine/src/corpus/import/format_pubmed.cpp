// PubMed baseline and daily update files (gzip XML, docs/formats.md): a <PubmedArticleSet> of
// <PubmedArticle> records and <DeleteCitation> lists. The file is read line by line, a small
// tokenizer (pubmed_splitter.hpp) finds each record's bounds, and each record is parsed on its
// own with pugixml, so memory stays that of one record.
// Kept: PMID (the id), DOI and PMC id (aliases), ArticleTitle, the Abstract (structured
// sections as "LABEL: text", joined by spaces), the journal Title (venue), the journal issue's
// PubDate (Year, Month, Day, or a MedlineDate such as "1998 Dec-1999 Jan"; the ArticleDate
// when it has none), the MeSH descriptor names (extra "mesh") and the ids of the works its
// <ReferenceList>s cite (extra "references": "PMID:N", else "DOI:X", else "PMCID:X").
// <PubmedBookArticle> records are not articles of a journal and are passed over.
#include "corpus/import/pubmed_splitter.hpp"
#include "corpus/import/record_fields.hpp"
#include "io/text_lines.hpp"
#include "novelty/util/error.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace novelty::import_detail {

namespace {

// All the text under `node` (inline markup such as <i> or <sup> dropped), blanks collapsed.
std::string all_text(const pugi::xml_node& node) {
    std::string raw;
    struct Walker : pugi::xml_tree_walker {
        std::string* out;
        bool for_each(pugi::xml_node& n) override {
            if (n.type() == pugi::node_pcdata || n.type() == pugi::node_cdata) *out += n.value();
            return true;
        }
    } walker;
    walker.out = &raw;
    const_cast<pugi::xml_node&>(node).traverse(walker);
    std::string out;
    bool space = false;
    for (char c : raw) {
        if (std::isspace(static_cast<unsigned char>(c))) { space = !out.empty(); continue; }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

int month_number(std::string m) {
    static const char* const names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
    if (!m.empty() && std::isdigit(static_cast<unsigned char>(m[0]))) {
        const int n = std::atoi(m.c_str());
        return n >= 1 && n <= 12 ? n : 0;
    }
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int i = 0; i < 12; ++i)
        if (m.rfind(names[i], 0) == 0) return i + 1;
    return 0;
}

std::string two_digits(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

// "YYYY", "YYYY-MM" or "YYYY-MM-DD" from a <PubDate> or <ArticleDate>; "" when it has no year.
std::string date_text(const pugi::xml_node& date) {
    std::string year = all_text(date.child("Year"));
    int month = month_number(all_text(date.child("Month")));
    const int day = std::atoi(all_text(date.child("Day")).c_str());
    if (year.empty()) {  // <MedlineDate>1998 Dec-1999 Jan</MedlineDate>: its first year and month
        const std::string medline = all_text(date.child("MedlineDate"));
        if (medline.size() < 4 || !std::all_of(medline.begin(), medline.begin() + 4, ::isdigit)) return {};
        year = medline.substr(0, 4);
        month = medline.size() > 5 ? month_number(medline.substr(5, 3)) : 0;
    }
    if (month == 0) return year;
    if (day < 1 || day > 31) return year + "-" + two_digits(month);
    return year + "-" + two_digits(month) + "-" + two_digits(day);
}

std::string abstract_text(const pugi::xml_node& abstract) {
    std::string out;
    for (const auto& part : abstract.children("AbstractText")) {
        const std::string text = all_text(part);
        if (text.empty()) continue;
        const std::string label = part.attribute("Label").value();
        if (!out.empty()) out += ' ';
        out += label.empty() ? text : label + ": " + text;
    }
    return out;
}

std::string article_id(const pugi::xml_node& article, const char* type) {
    for (const auto& id : article.child("PubmedData").child("ArticleIdList").children("ArticleId"))
        if (std::strcmp(id.attribute("IdType").value(), type) == 0) return all_text(id);
    return {};
}

// The works of the article's <ReferenceList>s, each as "PMID:N" (else "DOI:X", else "PMCID:X") from
// its <ArticleIdList>; references without one of those ids are left out.
nlohmann::json reference_ids(const pugi::xml_node& article) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& list : article.child("PubmedData").children("ReferenceList"))
        for (const auto& ref : list.children("Reference")) {
            std::string pmid, doi, pmc;
            for (const auto& id : ref.child("ArticleIdList").children("ArticleId")) {
                const char* type = id.attribute("IdType").value();
                if (std::strcmp(type, "pubmed") == 0 && pmid.empty()) pmid = all_text(id);
                if (std::strcmp(type, "doi") == 0 && doi.empty()) doi = all_text(id);
                if (std::strcmp(type, "pmc") == 0 && pmc.empty()) pmc = all_text(id);
            }
            if (!pmid.empty()) out.push_back("PMID:" + pmid);
            else if (!doi.empty()) out.push_back("DOI:" + doi);
            else if (!pmc.empty()) out.push_back("PMCID:" + pmc);
        }
    return out;
}

// The record as the JSON object RecordFields reads, so checks and extra_json work as for JSON.
nlohmann::json article_record(const pugi::xml_node& article) {
    const pugi::xml_node citation = article.child("MedlineCitation");
    const pugi::xml_node art = citation.child("Article");
    nlohmann::json r = nlohmann::json::object();
    r["pmid"] = all_text(citation.child("PMID"));
    r["title"] = all_text(art.child("ArticleTitle"));
    if (r["title"].get_ref<const std::string&>().empty()) r["title"] = all_text(art.child("VernacularTitle"));
    r["abstract"] = abstract_text(art.child("Abstract"));
    r["journal"] = all_text(art.child("Journal").child("Title"));
    std::string date = date_text(art.child("Journal").child("JournalIssue").child("PubDate"));
    if (date.empty()) date = date_text(art.child("ArticleDate"));
    if (!date.empty()) r["date"] = date;
    std::string doi = article_id(article, "doi");
    for (const auto& e : art.children("ELocationID"))
        if (doi.empty() && std::strcmp(e.attribute("EIdType").value(), "doi") == 0) doi = all_text(e);
    if (!doi.empty()) r["doi"] = doi;
    if (std::string pmc = article_id(article, "pmc"); !pmc.empty()) r["pmc"] = pmc;
    nlohmann::json mesh = nlohmann::json::array();
    for (const auto& heading : citation.child("MeshHeadingList").children("MeshHeading"))
        if (std::string name = all_text(heading.child("DescriptorName")); !name.empty()) mesh.push_back(name);
    if (!mesh.empty()) r["mesh"] = mesh;
    if (nlohmann::json refs = reference_ids(article); !refs.empty()) r["references"] = std::move(refs);
    return r;
}

Paper paper_from_article(const pugi::xml_node& article, const std::string& file, std::size_t line) {
    const nlohmann::json record = article_record(article);
    RecordFields fields(record, file, line);
    Paper paper;
    if (record["pmid"].get_ref<const std::string&>().empty()) fields.fail("<PubmedArticle> has no MedlineCitation/PMID");
    paper.id = fields.id({"pmid"});
    add_aliases(paper, AliasKind::pmid, paper.id);
    paper.title = fields.text({"title"});
    paper.abstract = fields.text({"abstract"});
    paper.venue = fields.text({"journal"});
    auto date = fields.date({"date"});
    if (auto it = record.find("doi"); it != record.end()) add_aliases(paper, AliasKind::doi, it->get<std::string>());
    if (auto it = record.find("pmc"); it != record.end()) add_aliases(paper, AliasKind::pmc, it->get<std::string>());
    finish_paper(paper, date, std::nullopt, fields, "");
    return paper;
}

class PubmedChunks {
public:
    PubmedChunks(const std::string& path, const PubmedSink& sink) : path_(path), sink_(sink) {}

    // One record, as the splitter found it.
    void handle(const PubmedSplitter::Record& record) {
        const std::string& name = record.name;
        if (!record.problem.empty()) {
            sink_.skip(InputError(path_, record.problem_line, "in the <" + name + "> of line " +
                                                                  std::to_string(record.line) + ": " + record.problem));
            return;
        }
        const std::string& chunk = record.text;
        pugi::xml_document doc;
        const pugi::xml_parse_result parsed = doc.load_buffer(chunk.data(), chunk.size(), pugi::parse_default,
                                                              pugi::encoding_utf8);
        if (!parsed) {
            const auto upto = std::min<std::size_t>(static_cast<std::size_t>(parsed.offset), chunk.size());
            const auto newlines = std::count(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
            sink_.skip(InputError(path_, record.line + static_cast<std::size_t>(newlines),
                                  std::string("malformed XML in <") + name + ">: " + parsed.description()));
            return;
        }
        if (name == "DeleteCitation") {
            for (const auto& pmid : doc.child("DeleteCitation").children("PMID")) sink_.deletion(all_text(pmid), record.line);
            return;
        }
        if (name != "PubmedArticle") return;
        try {
            sink_.article(paper_from_article(doc.child("PubmedArticle"), path_, record.line), record.line);
        } catch (const InputError& error) {
            sink_.skip(error);
        }
    }

private:
    const std::string& path_;
    const PubmedSink& sink_;
};

}  // namespace

std::string read_pubmed(const std::string& path, const PubmedSink& sink) {
    LineReader reader(path);
    PubmedChunks chunks(path, sink);
    PubmedSplitter splitter(path, [&](PubmedSplitter::Record& record) { chunks.handle(record); });
    std::string line;
    std::size_t n_lines = 0;
    while (reader.next(line)) {
        if (++n_lines % 4096 == 0 && sink.progress) sink.progress(reader.bytes_read(), reader.file_size());
        splitter.feed(line, reader.line_number());
    }
    splitter.finish();
    return reader.sha256();
}

}  // namespace novelty::import_detail
