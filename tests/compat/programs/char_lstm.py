"""A character-level LSTM language model: nn.Embedding, a 2-layer nn.LSTM, nn.Linear, Adam."""

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 11
EMBED = 8
HIDDEN = 12


class CharLSTM(nn.Module):
    def __init__(self, vocab_size=VOCAB, embed_dim=EMBED, hidden_dim=HIDDEN, num_layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, vocab_size)

    def forward(self, x, hidden=None):
        emb = self.embedding(x)
        out, hidden = self.lstm(emb, hidden)
        return self.fc(out), hidden


def make_model():
    return CharLSTM()


def train(model, data, steps):
    text = torch.tensor(data["text"])
    seq_len, batch_size = 10, 4
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    hidden = None
    for step in range(steps):
        starts = [(step * seq_len + b * 17) % (len(text) - seq_len - 1) for b in range(batch_size)]
        x = torch.stack([text[s : s + seq_len] for s in starts])
        y = torch.stack([text[s + 1 : s + seq_len + 1] for s in starts])
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden)
        optimizer.zero_grad()
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        yield loss
        optimizer.step()
    yield
    model.eval()
    with torch.no_grad():
        logits, _ = model(text[:5].unsqueeze(0))
        probs = F.softmax(logits[0, -1], dim=-1)
    assert abs(probs.sum().item() - 1.0) < 1e-4
