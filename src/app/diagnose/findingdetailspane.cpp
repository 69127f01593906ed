// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/findingdetailspane.h"

#include "app/diagnose/evidencedelegate.h"
#include "app/diagnose/evidencemodel.h"
#include "app/diagnose/targetfieldsmodel.h"
#include "app/widgets/severitystyle.h"
#include "core/diagnosis/sourcelist.h"
#include "ui_findingdetailspane.h"

#include <QCoreApplication>
#include <QHeaderView>
#include <QRegularExpression>
#include <QScrollBar>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// The advice names the agent's command (the CLI shows it as is); in the app, what to click instead.
QString guiAdvice(QString advice, bool tunable) {
    static const QRegularExpression command(
        uR"(\(moetune-agent tune with spec \{[^}]*\} plus K and topk from the model's config\.json\))"_s);
    if (!tunable)
        return advice;
    return advice.replace(command, QCoreApplication::translate("FindingDetailsPane",
                                                               "(click Tune This...: the Tune page fills the "
                                                               "job from this log and the host's probe)"));
}

QString htmlParagraphs(const QString &text) {
    return text.toHtmlEscaped().replace(u"\n"_s, u"<br>"_s);
}

} // namespace

FindingDetailsPane::FindingDetailsPane(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::FindingDetailsPane>())
    , m_evidenceModel(new EvidenceModel(this))
    , m_targetModel(new TargetFieldsModel(this)) {
    m_ui->setupUi(this);
    m_evidenceModel->setObjectName(u"evidenceModel"_s);
    m_targetModel->setObjectName(u"targetModel"_s);
    connect(m_ui->copyFindingButton, &QPushButton::clicked, this, &FindingDetailsPane::copyClicked);
    connect(m_ui->tuneButton, &QPushButton::clicked, this, &FindingDetailsPane::tuneClicked);
    connect(m_ui->headroomButton, &QPushButton::clicked, this, &FindingDetailsPane::headroomClicked);

    m_ui->detailsBrowser->document()->setDocumentMargin(8);
    m_ui->tuneSpecLabel->hide();

    QTableView *target = m_ui->targetView;
    target->setModel(m_targetModel);
    target->horizontalHeader()->setSectionResizeMode(TargetFieldsModel::FieldColumn,
                                                     QHeaderView::ResizeToContents);
    target->setTextElideMode(Qt::ElideNone);

    QTableView *evidence = m_ui->evidenceView;
    evidence->setModel(m_evidenceModel);
    evidence->setItemDelegate(new EvidenceDelegate(evidence));
    evidence->horizontalHeader()->setSectionResizeMode(EvidenceModel::LineColumn,
                                                       QHeaderView::ResizeToContents);
    auto jump = [this](const QModelIndex &index) {
        if (index.isValid())
            emit evidenceClicked(m_evidenceModel->evidence().at(index.row()));
    };
    connect(evidence, &QTableView::clicked, this, jump);
    connect(evidence, &QTableView::activated, this, jump);
}

FindingDetailsPane::~FindingDetailsPane() = default;

QTableView *FindingDetailsPane::targetView() const {
    return m_ui->targetView;
}

QTableView *FindingDetailsPane::evidenceView() const {
    return m_ui->evidenceView;
}

void FindingDetailsPane::setCopyEnabled(bool enabled) {
    m_ui->copyFindingButton->setEnabled(enabled);
}

void FindingDetailsPane::showFinding(const Finding *f, bool hasResult, const QString &hostLabel,
                                     const QString &nextStep) {
    // Another finding opens at its top, not where the last one was scrolled to.
    if (const QString id = f ? f->id : QString(); id != m_shownFindingId) {
        m_shownFindingId = id;
        m_ui->detailsScroll->verticalScrollBar()->setValue(0);
    }
    m_ui->tuneButton->setVisible(f && f->target && f->target->isTunable());
    m_ui->headroomButton->setVisible(f && f->target && f->target->isTunable());
    if (!f) {
        m_ui->detailsTitle->setText(tr("Details"));
        m_ui->detailsBrowser->setHtml(
            hasResult ? tr("<p style='color:gray'>Select a finding to see what it means and what "
                           "to do about it.</p>")
                      : tr("<p style='color:gray'>Paste a server log on the left: its findings "
                           "appear above, their details here.</p>"));
        m_targetModel->setTarget(std::nullopt);
        m_ui->tuneSpecLabel->hide(); // the last finding's next step is not this page's any more
        m_evidenceModel->setEvidence({});
        m_ui->targetHeader->setText(tr("Tuning target"));
        m_ui->evidenceHeader->setText(tr("Evidence"));
        return;
    }
    const QColor color = SeverityStyle::color(f->severity);
    m_ui->detailsTitle->setText(tr("Details"));
    QString html;
    html +=
        u"<h3 style='margin-top:0; margin-bottom:4px'><span style='color:%1'>%2</span> &nbsp;%3</h3>"_s.arg(
            color.name(), SeverityStyle::label(f->severity).toHtmlEscaped(), f->title.toHtmlEscaped());
    QString seen = tr("Seen %n time(s)", nullptr, f->occurrences);
    if (!f->sources.isEmpty())
        seen += tr(" on %1").arg(compactSources(f->sources));
    html += u"<p style='color:gray; margin-top:0'>"_s + seen.toHtmlEscaped() + u" &middot; rule <code>"_s +
            f->rule.toHtmlEscaped() + u"</code></p>"_s;
    // What to do first: it is what a person came for; the why follows.
    if (!f->advice.isEmpty()) {
        html += u"<table width='100%' cellpadding='8' style='background-color:#eaf3ea; margin-top:2px'>"
                u"<tr><td><b>What to do</b><br>"_s +
                htmlParagraphs(guiAdvice(f->advice, f->target && f->target->isTunable())) +
                u"</td></tr></table>"_s;
    }
    if (!f->explanation.isEmpty())
        html += u"<p><b>Why</b><br>"_s + htmlParagraphs(f->explanation) + u"</p>"_s;
    m_ui->detailsBrowser->setHtml(html);

    m_targetModel->setTarget(f->target);
    m_ui->tuneSpecLabel->setVisible(f->target && f->target->isTunable());
    if (f->target)
        m_ui->tuneSpecLabel->setText(nextStep);
    m_ui->targetHeader->setText(f->target ? tr("Tuning target: %1").arg(f->target->shapeSummary())
                                          : tr("Tuning target: none for this finding"));
    m_ui->tuneButton->setToolTip(
        hostLabel.isEmpty() ? tr("Tune this shape (pick the GPU host on the Tune page)")
                            : tr("Tune this shape on %1, the host this log came from").arg(hostLabel));
    m_evidenceModel->setEvidence(f->evidence);
    // A finding of many lines shows its first lines and the latest ones, and says how many are left out.
    m_ui->evidenceHeader->setText(
        f->evidenceOmitted > 0
            ? tr("Evidence: the first %1 and the latest %2 lines; %3 lines between them left out (click one "
                 "to show it in the log)")
                  .arg(Finding::headEvidence)
                  .arg(f->evidence.size() - Finding::headEvidence)
                  .arg(f->evidenceOmitted)
            : tr("Evidence (click a line to show it in the log)"));
}

} // namespace moetune
