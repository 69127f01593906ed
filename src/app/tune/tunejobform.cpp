// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunejobform.h"

#include "core/moe/configname.h"
#include "remote/flows/hostregistry.h"
#include "ui_tunejobform.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>

using namespace Qt::StringLiterals;

namespace moetune {

TuneJobForm::TuneJobForm(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::TuneJobForm>()) {
    m_ui->setupUi(this);
    // The sentences change as one types: each sits in a box of fixed height (scrolling when longer), so
    // the fields and buttons below never move under the pointer.
    const int line = m_ui->validationLabel->fontMetrics().lineSpacing();
    for (QWidget *box : {m_ui->validationLabelBox, m_ui->fileNamesLabelBox})
        box->setFixedHeight(4 * line + 4);

    m_ui->frameworkCombo->addItem(u"SGLang"_s, int(Framework::SGLang));
    m_ui->frameworkCombo->addItem(u"vLLM"_s, int(Framework::VLLM));
    m_ui->dtypeCombo->addItem(u"bf16 / fp16"_s, QString());
    for (const QString &d : ConfigName::knownDtypes())
        m_ui->dtypeCombo->addItem(d, d);
    m_ui->strategyCombo->addItems({u"fast"_s, u"exhaustive"_s});
    m_ui->backendCombo->addItem(tr("auto (server's kernel, else Triton)"), u"auto"_s);
    m_ui->backendCombo->addItem(u"triton"_s, u"triton"_s);
    m_ui->backendCombo->addItem(u"server"_s, u"server"_s);
    m_ui->backendCombo->addItem(tr("synthetic (SIMULATED numbers, a test double for a GPU)"), u"synthetic"_s);
    QStringList sizes;
    for (int m : TuneSpec::defaultBatchSizes())
        sizes.append(QString::number(m));
    m_ui->batchSizesEdit->setText(sizes.join(u","_s));
    m_ui->gpusEdit->setText(u"all"_s);
    m_ui->expertsSpin->setValue(0);
    for (QSpinBox *s : {m_ui->expertsSpin, m_ui->nSpin, m_ui->kSpin, m_ui->topkSpin, m_ui->budgetSpin})
        connect(s, &QSpinBox::valueChanged, this, &TuneJobForm::changed);
    for (QComboBox *c : {m_ui->frameworkCombo, m_ui->dtypeCombo, m_ui->strategyCombo, m_ui->backendCombo})
        connect(c, &QComboBox::currentIndexChanged, this, &TuneJobForm::changed);
    for (QLineEdit *e : {m_ui->blockShapeEdit, m_ui->batchSizesEdit, m_ui->gpusEdit})
        connect(e, &QLineEdit::textChanged, this, &TuneJobForm::changed);
    for (QCheckBox *b : {m_ui->perChannelCheck, m_ui->upDownCheck})
        connect(b, &QCheckBox::toggled, this, &TuneJobForm::changed);
    connect(m_ui->hostCombo, &QComboBox::currentIndexChanged, this, &TuneJobForm::hostChanged);
    // A pasted log names no host to probe: the model's own config.json knows K and top-k.
    auto *fromConfig = new QPushButton(tr("K and top-k from config.json..."), this);
    fromConfig->setObjectName(u"configJsonButton"_s);
    fromConfig->setToolTip(tr("Read hidden_size and num_experts_per_tok from the model's config.json on "
                              "this machine."));
    int row = -1;
    QFormLayout::ItemRole role;
    m_ui->fieldsLayout->getWidgetPosition(m_ui->topkSpin, &row, &role);
    m_ui->fieldsLayout->insertRow(row + 1, QString(), fromConfig);
    connect(fromConfig, &QPushButton::clicked, this, [this] {
        auto *dialog = new QFileDialog(this, tr("The Model's config.json"), QDir::homePath(),
                                       tr("Model config (config.json *.json)"));
        dialog->setObjectName(u"configJsonDialog"_s);
        dialog->setFileMode(QFileDialog::ExistingFile);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &QFileDialog::fileSelected, this, [this](const QString &path) {
            if (const QString why = loadModelConfig(path); !why.isEmpty())
                setSource(why);
        });
        dialog->open();
    });
}

QString TuneJobForm::loadModelConfig(const QString &path) {
    QFile f(path);
    if (f.size() > 4 << 20 || !f.open(QIODevice::ReadOnly))
        return tr("Could not read %1 (a model's config.json is a few kB).")
            .arg(QDir::toNativeSeparators(path));
    const QJsonObject top = QJsonDocument::fromJson(f.readAll()).object();
    // Multimodal models keep the language model's shape under text_config.
    const QJsonObject text = top.value("text_config"_L1).toObject();
    auto field = [&](QLatin1StringView key) {
        const QJsonValue v = top.contains(key) ? top.value(key) : text.value(key);
        return v.isDouble() ? v.toInt() : 0;
    };
    const int k = field("hidden_size"_L1);
    int topk = field("num_experts_per_tok"_L1);
    if (topk <= 0)
        topk = field("moe_topk"_L1);
    if (k <= 0 || topk <= 0)
        return tr("%1 names no hidden_size and num_experts_per_tok: is it the config.json of a MoE model?")
            .arg(QDir::toNativeSeparators(path));
    m_ui->kSpin->setValue(k);
    m_ui->topkSpin->setValue(topk);
    setSource(tr("K %1 and top-k %2 from %3.").arg(k).arg(topk).arg(QDir::toNativeSeparators(path)));
    return {};
}

TuneJobForm::~TuneJobForm() = default;

void TuneJobForm::reloadHosts(const HostRegistry &registry) {
    const QString current = hostAlias();
    const QSignalBlocker block(m_ui->hostCombo);
    m_ui->hostCombo->clear();
    const HostConfig local = registry.localHost();
    m_ui->hostCombo->addItem(local.label(), local.alias);
    for (const HostConfig &h : registry.hosts())
        m_ui->hostCombo->addItem(registry.displayName(h.alias), h.alias);
    const int i = m_ui->hostCombo->findData(current);
    m_ui->hostCombo->setCurrentIndex(i >= 0 ? i : 0);
}

QString TuneJobForm::hostAlias() const {
    return m_ui->hostCombo->currentData().toString();
}

QString TuneJobForm::hostLabel() const {
    return m_ui->hostCombo->currentText();
}

int TuneJobForm::hostCount() const {
    return m_ui->hostCombo->count();
}

void TuneJobForm::chooseHost(const QString &alias) {
    if (const int i = m_ui->hostCombo->findData(alias); i >= 0)
        m_ui->hostCombo->setCurrentIndex(i);
}

void TuneJobForm::clearHost() {
    m_ui->hostCombo->setPlaceholderText(tr("Choose the host to tune on"));
    m_ui->hostCombo->setCurrentIndex(-1);
}

void TuneJobForm::chooseBackend(const QString &backend) {
    m_ui->backendCombo->setCurrentIndex(qMax(0, m_ui->backendCombo->findData(backend)));
}

void TuneJobForm::setSource(const QString &sentence) {
    m_ui->sourceLabel->setText(sentence);
}

void TuneJobForm::setSpec(const TuneSpec &s) {
    m_ui->frameworkCombo->setCurrentIndex(qMax(0, m_ui->frameworkCombo->findData(int(s.framework))));
    m_ui->expertsSpin->setValue(s.experts);
    m_ui->nSpin->setValue(s.n);
    m_ui->kSpin->setValue(s.hiddenSize);
    m_ui->topkSpin->setValue(s.topk);
    m_ui->dtypeCombo->setCurrentIndex(qMax(0, m_ui->dtypeCombo->findData(s.dtype)));
    m_ui->blockShapeEdit->setText(s.blockShape ? u"%1,%2"_s.arg((*s.blockShape)[0]).arg((*s.blockShape)[1])
                                               : QString());
    m_ui->perChannelCheck->setChecked(s.perChannelQuant);
    m_ui->upDownCheck->setChecked(s.upAndDown);
    QStringList sizes;
    for (int m : s.batchSizes)
        sizes.append(QString::number(m));
    m_ui->batchSizesEdit->setText(sizes.join(u","_s));
    QStringList gpus;
    for (int g : s.gpus)
        gpus.append(QString::number(g));
    m_ui->gpusEdit->setText(gpus.isEmpty() ? u"all"_s : gpus.join(u","_s));
    if (m_ui->strategyCombo->findText(s.strategy) < 0)
        m_ui->strategyCombo->addItem(s.strategy);
    m_ui->strategyCombo->setCurrentText(s.strategy);
    m_ui->budgetSpin->setValue(int(s.timeBudgetSeconds));
    chooseBackend(s.backend);
}

TuneSpec TuneJobForm::spec() const {
    TuneSpec s;
    s.framework = Framework(m_ui->frameworkCombo->currentData().toInt());
    s.experts = m_ui->expertsSpin->value();
    s.n = m_ui->nSpin->value();
    s.hiddenSize = m_ui->kSpin->value();
    s.topk = m_ui->topkSpin->value();
    s.dtype = m_ui->dtypeCombo->currentData().toString();
    QString err;
    if (const auto b = TuneJobCheck::parseList(m_ui->blockShapeEdit->text(), true, &err); b && b->size() == 2)
        s.blockShape = std::array<int, 2>{(*b)[0], (*b)[1]};
    s.perChannelQuant = m_ui->perChannelCheck->isChecked();
    s.upAndDown = m_ui->upDownCheck->isChecked();
    if (const auto m = TuneJobCheck::parseList(m_ui->batchSizesEdit->text(), false, &err))
        s.batchSizes = *m;
    if (const auto g = TuneJobCheck::parseList(m_ui->gpusEdit->text(), true, &err))
        s.gpus = *g;
    s.strategy = m_ui->strategyCombo->currentText();
    s.timeBudgetSeconds = m_ui->budgetSpin->value();
    s.backend = m_ui->backendCombo->currentData().toString();
    return s;
}

QString TuneJobForm::validation() const {
    return m_ui->validationLabel->text();
}

TuneJobCheck TuneJobForm::showCheck(const TuneSpec &s, const std::optional<TuningTarget> &target) {
    TuneJobCheck c = TuneJobCheck::check(s, target);
    QString err;
    if (!TuneJobCheck::parseList(m_ui->batchSizesEdit->text(), false, &err))
        c.problems.append({u"batchSizesEdit"_s, u"Batch sizes: "_s + err});
    if (!TuneJobCheck::parseList(m_ui->gpusEdit->text(), true, &err))
        c.problems.append(
            {u"gpusEdit"_s, u"GPUs: "_s + err + u" Use device indices such as 0,1 or 'all'."_s});
    const auto block = TuneJobCheck::parseList(m_ui->blockShapeEdit->text(), true, &err);
    if (!block || (!block->isEmpty() && block->size() != 2))
        c.problems.append(
            {u"blockShapeEdit"_s, u"The block shape is two integers such as 128,128, or empty."_s});
    QStringList sentences;
    for (QWidget *w : findChildren<QWidget *>())
        if (w->property("moetuneProblem").toBool()) {
            w->setToolTip(QString());
            w->setProperty("moetuneProblem", false);
        }
    for (const auto &p : c.problems) {
        sentences.append(p.sentence);
        if (QWidget *w = p.field.isEmpty() ? nullptr : findChild<QWidget *>(p.field)) {
            w->setToolTip(p.sentence);
            w->setProperty("moetuneProblem", true);
        }
    }
    m_ui->validationLabel->setText(sentences.join(u'\n'));
    m_ui->validationLabel->setStyleSheet(sentences.isEmpty() ? QString() : u"color: #b03030;"_s);
    QString names = tr("Files the run writes: %1").arg(c.fileNames.join(u", "_s));
    if (!c.fileNamesMatch.isEmpty())
        names += u"\n"_s + c.fileNamesMatch;
    if (s.backend == "synthetic"_L1)
        names += u"\n"_s +
                 tr("SIMULATED: the synthetic backend measures nothing; its files cannot be installed on a "
                    "real server.");
    m_ui->fileNamesLabel->setText(names);
    return c;
}

} // namespace moetune
