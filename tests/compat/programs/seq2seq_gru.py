"""A seq2seq GRU encoder-decoder with teacher forcing, after the PyTorch translation tutorial.

The decoder feeds the target token (teacher forcing) on even steps and its own greedy
prediction (topk, detached) on odd steps, so both paths are exercised deterministically.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

SOS_token = 0
SRC_VOCAB = 9
TGT_VOCAB = 7
HIDDEN = 10


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, input):
        embedded = self.embedding(input)
        output, hidden = self.gru(embedded)
        return output, hidden


class DecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor, use_teacher_forcing):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        for i in range(target_tensor.size(1)):
            decoder_output, decoder_hidden = self.forward_step(decoder_input, decoder_hidden)
            decoder_outputs.append(decoder_output)
            if use_teacher_forcing:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        return decoder_outputs, decoder_hidden

    def forward_step(self, input, hidden):
        output = self.embedding(input)
        output = F.relu(output)
        output, hidden = self.gru(output, hidden)
        output = self.out(output)
        return output, hidden


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = EncoderRNN(SRC_VOCAB, HIDDEN)
        self.decoder = DecoderRNN(HIDDEN, TGT_VOCAB)


def make_model():
    return Seq2Seq()


def train(model, data, steps):
    input_tensor = torch.tensor(data["source"])
    target_tensor = torch.tensor(data["target"])
    encoder_optimizer = optim.Adam(model.encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(model.decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    for step in range(steps):
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = model.encoder(input_tensor)
        decoder_outputs, _ = model.decoder(
            encoder_outputs, encoder_hidden, target_tensor, use_teacher_forcing=step % 2 == 0
        )
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        yield loss
        encoder_optimizer.step()
        decoder_optimizer.step()
    yield
